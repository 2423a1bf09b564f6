//! Real figures from this machine for the system monitor tools.

use serde_json::{Value, json};
use sysinfo::{MINIMUM_CPU_UPDATE_INTERVAL, ProcessRefreshKind, ProcessesToUpdate, RefreshKind, System};

pub struct Snapshot {
    cpu_percent: f32,
    cores: usize,
    memory_total: u64,
    memory_used: u64,
    load_average: [f64; 3],
    top: Vec<(String, u32, f32, u64)>,
    host: Option<String>,
}

/// Takes two CPU readings `MINIMUM_CPU_UPDATE_INTERVAL` apart (sysinfo needs two for a rate).
pub async fn snapshot() -> Snapshot {
    let mut sys = System::new_with_specifics(RefreshKind::nothing());
    sys.refresh_cpu_usage();
    sys.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing().with_cpu().with_memory(),
    );
    tokio::time::sleep(MINIMUM_CPU_UPDATE_INTERVAL.max(std::time::Duration::from_millis(250))).await;
    sys.refresh_cpu_usage();
    sys.refresh_memory();
    sys.refresh_processes_specifics(
        ProcessesToUpdate::All,
        true,
        ProcessRefreshKind::nothing().with_cpu().with_memory(),
    );
    let mut top: Vec<(String, u32, f32, u64)> = sys
        .processes()
        .values()
        .map(|p| {
            (
                p.name().to_string_lossy().into_owned(),
                p.pid().as_u32(),
                p.cpu_usage(),
                p.memory(),
            )
        })
        .collect();
    top.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.3.cmp(&a.3)));
    top.truncate(5);
    let load = System::load_average();
    Snapshot {
        cpu_percent: sys.global_cpu_usage(),
        cores: sys.cpus().len(),
        memory_total: sys.total_memory(),
        memory_used: sys.used_memory(),
        load_average: [load.one, load.five, load.fifteen],
        top,
        host: System::host_name(),
    }
}

const MIB: f64 = 1024.0 * 1024.0;

impl Snapshot {
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{}: CPU {:.1}% of {} cores, memory {:.0} of {:.0} MiB used, load {:.2} {:.2} {:.2}.\nBusiest processes:",
            self.host.as_deref().unwrap_or("this computer"),
            self.cpu_percent,
            self.cores,
            self.memory_used as f64 / MIB,
            self.memory_total as f64 / MIB,
            self.load_average[0],
            self.load_average[1],
            self.load_average[2],
        );
        for (name, pid, cpu, mem) in &self.top {
            s.push_str(&format!(
                "\n- {name} (pid {pid}): CPU {cpu:.1}%, {:.0} MiB",
                *mem as f64 / MIB
            ));
        }
        s
    }

    pub fn to_json(&self) -> Value {
        json!({
            "host": self.host,
            "cpuPercent": self.cpu_percent,
            "cores": self.cores,
            "memory": { "totalBytes": self.memory_total, "usedBytes": self.memory_used },
            "loadAverage": self.load_average,
            "topProcesses": self.top.iter().map(|(name, pid, cpu, mem)| json!({
                "name": name, "pid": pid, "cpuPercent": cpu, "memoryBytes": mem
            })).collect::<Vec<_>>(),
            "takenAtUnixMs": std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0),
        })
    }
}

/// Global CPU use between successive calls.
pub struct CpuSampler {
    sys: System,
}

impl CpuSampler {
    pub fn new() -> Self {
        let mut sys = System::new_with_specifics(RefreshKind::nothing());
        sys.refresh_cpu_usage();
        CpuSampler { sys }
    }

    pub fn sample(&mut self) -> f32 {
        self.sys.refresh_cpu_usage();
        self.sys.global_cpu_usage()
    }
}
