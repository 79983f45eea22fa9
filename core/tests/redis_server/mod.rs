//! A real `redis-server` for the fleet tests: the Debian package installed pinned by
//! scripts/debian-tool.sh, started on 127.0.0.1 and killed when dropped.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A redis-server on 127.0.0.1, killed when dropped.
pub struct Redis {
    child: Child,
    pub port: u16,
}

impl Redis {
    pub fn start(port: u16) -> Redis {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/debian-tool.sh");
        let out = Command::new("bash").arg(script).arg("redis-server").stderr(Stdio::inherit()).output().unwrap();
        assert!(
            out.status.success(),
            "scripts/debian-tool.sh redis-server failed: it installs the pinned redis-server"
        );
        let exe = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        let child = Command::new(exe)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen on port {port} within 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        Redis { child, port }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
