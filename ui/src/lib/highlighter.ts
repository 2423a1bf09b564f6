// highlight.js with the languages Porthole highlights. Loaded on demand (lib/markdown.ts), so
// the window's first paint does not parse it: the first code block in a reply fetches it.
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import css from "highlight.js/lib/languages/css";
import go from "highlight.js/lib/languages/go";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

for (const [name, language] of Object.entries({ bash, css, go, javascript, json, python, rust, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, language);
}

export default hljs;
