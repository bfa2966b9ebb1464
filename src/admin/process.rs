//! `GET /admin/process`: the server's own CPU time and resident memory, so that a load
//! test can state what each request costs the server (CPU consumed between two readings
//! over the requests answered between them) without access to the server's machine.
//!
//! Linux only: the figures come from `/proc/self/stat` (user and system CPU time, in the
//! kernel's clock ticks, converted with the tick rate the kernel hands the process in its
//! auxiliary vector) and `/proc/self/status` (`VmRSS`, `VmHWM`). Elsewhere, and whenever
//! a file cannot be read, the figures are `null`: an absent figure, never a wrong one.

use crate::http::json::Json;
use serde::{Deserialize, Serialize};

/// The process's cumulative CPU time and its memory, as answered (less `object`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessUsage {
    /// CPU seconds spent in user mode since the process started, all threads together.
    pub user_cpu_s: Option<f64>,
    /// CPU seconds spent in the kernel on the process's behalf since it started.
    pub system_cpu_s: Option<f64>,
    /// Resident memory now.
    pub resident_memory_bytes: Option<u64>,
    /// The most resident memory the process has had.
    pub peak_resident_memory_bytes: Option<u64>,
}

impl ProcessUsage {
    /// User plus system CPU seconds, when both are known.
    pub fn cpu_s(&self) -> Option<f64> {
        Some(self.user_cpu_s? + self.system_cpu_s?)
    }
}

/// The route's answer: `{object: "process_usage", user_cpu_s, system_cpu_s,
/// resident_memory_bytes, peak_resident_memory_bytes}`.
pub async fn usage() -> Json<serde_json::Value> {
    #[derive(Serialize)]
    struct Wire {
        object: &'static str,
        #[serde(flatten)]
        usage: ProcessUsage,
    }
    let wire = Wire {
        object: "process_usage",
        usage: current(),
    };
    Json(serde_json::to_value(wire).unwrap_or_default())
}

/// This process's figures now.
#[cfg(target_os = "linux")]
pub fn current() -> ProcessUsage {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let cpu = read("/proc/self/stat").and_then(|s| cpu_from_stat(&s, clock_ticks_per_second()));
    let status = read("/proc/self/status").unwrap_or_default();
    ProcessUsage {
        user_cpu_s: cpu.map(|(user, _)| user),
        system_cpu_s: cpu.map(|(_, system)| system),
        resident_memory_bytes: status_bytes(&status, "VmRSS"),
        peak_resident_memory_bytes: status_bytes(&status, "VmHWM"),
    }
}

/// This process's figures now: none off Linux.
#[cfg(not(target_os = "linux"))]
pub fn current() -> ProcessUsage {
    ProcessUsage::default()
}

/// The tick rate of the CPU times in `/proc` (`sysconf(_SC_CLK_TCK)`), read once from the
/// auxiliary vector; 100, the value on every common architecture, if it cannot be read.
#[cfg(target_os = "linux")]
fn clock_ticks_per_second() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::fs::read("/proc/self/auxv")
            .ok()
            .and_then(|auxv| clock_ticks_from_auxv(&auxv))
            .filter(|&t| t > 0)
            .unwrap_or(100)
    })
}

/// `AT_CLKTCK` in an auxiliary vector: pairs of native-endian machine words (key, value),
/// ended by key 0 (`AT_NULL`).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn clock_ticks_from_auxv(auxv: &[u8]) -> Option<u64> {
    const AT_NULL: u64 = 0;
    const AT_CLKTCK: u64 = 17;
    const WORD: usize = std::mem::size_of::<usize>();
    let read = |bytes: &[u8]| -> Option<u64> {
        let word = <[u8; WORD]>::try_from(bytes.get(..WORD)?).ok()?;
        Some(usize::from_ne_bytes(word) as u64)
    };
    for pair in auxv.chunks_exact(2 * WORD) {
        let key = read(pair)?;
        let value = read(&pair[WORD..])?;
        match key {
            AT_NULL => return None,
            AT_CLKTCK => return Some(value),
            _ => {}
        }
    }
    None
}

/// (user, system) CPU seconds from a `/proc/<pid>/stat` line. The command name, in
/// parentheses, may hold spaces and parentheses itself, so fields are counted from the
/// last `)`: utime and stime are the 14th and 15th fields of the line.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn cpu_from_stat(stat: &str, ticks_per_second: u64) -> Option<(f64, f64)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    let per_second = ticks_per_second as f64;
    Some((user as f64 / per_second, system as f64 / per_second))
}

/// A `Name:   1234 kB` line of `/proc/<pid>/status`, in bytes.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn status_bytes(status: &str, name: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?.strip_prefix(':')?;
        let kib: u64 = rest.trim().strip_suffix("kB")?.trim().parse().ok()?;
        Some(kib * 1024)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_times_are_read_after_a_command_name_with_spaces_and_parentheses() {
        let stat = "4242 (switch (board) x) S 1 4242 4242 0 -1 4194560 2069 0 0 0 \
                    1234 567 0 0 20 0 9 0 1000 123456789 4567 18446744073709551615";
        assert_eq!(cpu_from_stat(stat, 100), Some((12.34, 5.67)));
        assert_eq!(cpu_from_stat(stat, 1000), Some((1.234, 0.567)));
        assert_eq!(cpu_from_stat("4242 (cut) S 1 2", 100), None);
        assert_eq!(cpu_from_stat("no name at all", 100), None);
    }

    #[test]
    fn memory_lines_are_read_in_bytes() {
        let status = "Name:\tswitchboard\nVmHWM:\t  20480 kB\nVmRSS:\t   10240 kB\nThreads:\t9\n";
        assert_eq!(status_bytes(status, "VmRSS"), Some(10 * 1024 * 1024));
        assert_eq!(status_bytes(status, "VmHWM"), Some(20 * 1024 * 1024));
        assert_eq!(status_bytes(status, "VmSwap"), None);
        assert_eq!(status_bytes("VmRSSX:\t1 kB", "VmRSS"), None);
    }

    #[test]
    fn the_tick_rate_is_found_in_an_auxiliary_vector() {
        let vector = |pairs: &[(u64, u64)]| -> Vec<u8> {
            let mut out = Vec::new();
            for &(k, v) in pairs {
                for x in [k, v] {
                    let x = x as usize;
                    out.extend_from_slice(&x.to_ne_bytes());
                }
            }
            out
        };
        assert_eq!(
            clock_ticks_from_auxv(&vector(&[(6, 4096), (17, 250), (0, 0)])),
            Some(250)
        );
        // Ended before the key: absent.
        assert_eq!(
            clock_ticks_from_auxv(&vector(&[(6, 4096), (0, 0), (17, 250)])),
            None
        );
        assert_eq!(clock_ticks_from_auxv(&[]), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_process_has_used_cpu_and_memory() {
        let u = current();
        assert!(u.cpu_s().is_some_and(|s| s >= 0.0), "{u:?}");
        assert!(u.resident_memory_bytes.is_some_and(|b| b > 0), "{u:?}");
        assert!(
            u.peak_resident_memory_bytes >= u.resident_memory_bytes,
            "{u:?}"
        );
    }
}
