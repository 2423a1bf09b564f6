#!/usr/bin/env python3
"""Usage: sections.py PROGRAM LINK_MAP TRACE... > PROGRAM.txt

The linker's symbol ordering file for PROGRAM (see README.md here): the symbols of the code
sections on the pages the traces (first-touch.c's records) saw touched, in the order the pages
were first touched. LINK_MAP is lld's map of the same build (`-Map`). A page holds several
functions and the traces see pages, so the list holds every function on a touched page.
"""
import bisect
import re
import struct
import subprocess
import sys

program, link_map, traces = sys.argv[1], sys.argv[2], sys.argv[3:]

# .text's address and offset in the file
text = None
for line in subprocess.run(["readelf", "-S", "-W", program], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.replace("[ ", "[").split()
    if len(fields) > 5 and fields[1] == ".text":
        text = (int(fields[3], 16), int(fields[4], 16), int(fields[5], 16))
if text is None:
    sys.exit(f"{program} has no .text section")
address, offset, size = text

# the map's input sections in .text: address, size, the symbol the section is named for
section = re.compile(r":\(\.text\.(?:(?:unlikely|hot|startup|exit|split)\.)?(\S+)\)$")
sections, in_text = [], False
for line in open(link_map):
    fields = line.split()
    if len(fields) == 5 and fields[4].startswith("."):  # an output section
        in_text = fields[4] == ".text"
        if in_text and int(fields[0], 16) != address:
            sys.exit(f"{link_map} is not the map of {program}")
    elif in_text and len(fields) >= 5 and (m := section.search(line.strip())):
        sections.append((int(fields[0], 16), int(fields[2], 16), m.group(1)))
sections.sort()
starts = [s[0] for s in sections]

pages = {}
for trace in traces:
    data = open(trace, "rb").read()
    for i in range(0, len(data) - 15, 16):
        page, prot = struct.unpack("<QQ", data[i:i + 16])
        if prot & 4 and offset <= page < offset + size:  # PROT_EXEC
            pages.setdefault(page - offset + address, None)

listed, order, listed_bytes = set(), [], 0
for page in pages:
    i = max(bisect.bisect_right(starts, page) - 1, 0)
    while i < len(sections) and sections[i][0] < page + 4096:
        start, length, symbol = sections[i]
        if start + length > page and symbol not in listed:
            listed.add(symbol)
            order.append(symbol)
            listed_bytes += length
        i += 1

total = sum(s[1] for s in sections)
print(f"# The code {program.split('/')[-1]} runs from its start until it is at rest, first touched first:")
print(f"# {len(order)} of {len(sections)} functions, {listed_bytes / 2**20:.2f} of {total / 2**20:.2f} MiB,")
print(f"# from {len(traces)} runs. Made by src-tauri/link-order/generate; do not edit.")
for symbol in order:
    print(symbol)
print(f"{program}: {len(pages)} pages touched, {len(order)} functions listed ({listed_bytes / 2**20:.2f} MiB)", file=sys.stderr)
