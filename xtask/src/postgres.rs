//! A throwaway PostgreSQL server on a free loopback port, data in a temp
//! folder, fsync on. Installed from Debian's packages when missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Result;
use crate::shell::{self, apt_install, free_port, is_root, output, run};

pub struct Server {
    pub url: String,
    /// A database of the same server that takes TLS connections only, and
    /// the CA that signed the server's certificate.
    pub tls_url: String,
    pub tls_ca: PathBuf,
    pub version: String,
    bin: PathBuf,
    data: PathBuf,
}

fn find_bin() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("pg_ctl").exists() && p.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop()
}

/// Runs a PostgreSQL tool as the `postgres` user when we are root (the
/// server refuses to run as root), else as ourselves.
fn as_postgres(bin: &Path, tool: &str) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(bin.join(tool));
        cmd
    } else {
        Command::new(bin.join(tool))
    }
}

impl Server {
    pub fn start() -> Result<Self> {
        let bin = match find_bin() {
            Some(bin) => bin,
            None => {
                apt_install(&["postgresql"])?;
                find_bin().ok_or("PostgreSQL was installed but its binaries are not under /usr/lib/postgresql")?
            }
        };
        if is_root() && output(Command::new("id").arg("postgres")).is_err() {
            run(Command::new("useradd").args(["--system", "--no-create-home", "postgres"]))?;
        }
        let data = std::env::temp_dir().join(format!("lattice-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&data);
        std::fs::create_dir_all(&data).map_err(|e| format!("creating {}: {e}", data.display()))?;
        if is_root() {
            run(Command::new("chown").args(["-R", "postgres"]).arg(&data))?;
        }
        let pgdata = data.join("pgdata");
        output(as_postgres(&bin, "initdb").arg("-D").arg(&pgdata).args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]))?;
        let tls = tls(&data, &pgdata)?;
        let port = free_port();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -k {} -c max_connections=300 -c fsync=on \
             -c shared_preload_libraries=pg_stat_statements -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
            data.display(),
            tls.join("server.pem").display(),
            tls.join("server.key").display(),
        );
        output(as_postgres(&bin, "pg_ctl").arg("-D").arg(&pgdata).arg("-l").arg(data.join("log")).args(["-w", "-t", "60", "-o", &options, "start"]))
            .map_err(|e| format!("PostgreSQL did not start: {e}\n{}", std::fs::read_to_string(data.join("log")).unwrap_or_default()))?;
        let version = output(Command::new(bin.join("postgres")).arg("--version")).unwrap_or_default().trim().to_owned();
        output(as_postgres(&bin, "psql").args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "postgres",
            "-c",
            &format!("CREATE DATABASE {TLS_DATABASE}"),
        ]))?;
        Ok(Self {
            url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            tls_url: format!("postgres://postgres@127.0.0.1:{port}/{TLS_DATABASE}"),
            tls_ca: tls.join("ca.pem"),
            version,
            bin,
            data,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = output(as_postgres(&self.bin, "pg_ctl").arg("-D").arg(self.data.join("pgdata")).args(["-m", "fast", "stop"]));
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

/// The database that refuses connections without TLS.
const TLS_DATABASE: &str = "lattice_tls";

/// A CA and a server certificate it signed for 127.0.0.1 (by the openssl
/// command), in `data/tls`, readable by the server only; and a rule that
/// the TLS database takes no connection without TLS.
fn tls(data: &Path, pgdata: &Path) -> Result<PathBuf> {
    if output(Command::new("openssl").arg("version")).is_err() {
        apt_install(&["openssl"])?;
    }
    let dir = data.join("tls");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let openssl = |args: &[&str]| output(Command::new("openssl").args(args).current_dir(&dir)).map(|_| ());
    openssl(&["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "7", "-subj", "/CN=lattice test CA"])?;
    openssl(&["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"])?;
    std::fs::write(dir.join("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n").map_err(|e| e.to_string())?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "7",
        "-extfile",
        "server.ext",
    ])?;
    if is_root() {
        run(Command::new("chown").args(["-R", "postgres"]).arg(&dir))?;
    }
    run(Command::new("chmod").arg("600").arg(dir.join("server.key")))?;
    let hba = pgdata.join("pg_hba.conf");
    let rules = std::fs::read_to_string(&hba).map_err(|e| e.to_string())?;
    std::fs::write(&hba, format!("hostnossl {TLS_DATABASE} all all reject\n{rules}")).map_err(|e| e.to_string())?;
    Ok(dir)
}

/// `cargo xtask postgres`: start one and keep it until Ctrl-C.
pub fn hold() -> Result {
    let server = Server::start()?;
    println!("export LATTICE_TEST_POSTGRES_URL={}", server.url);
    println!("export LATTICE_TEST_POSTGRES_TLS_URL={}", server.tls_url);
    println!("export LATTICE_TEST_POSTGRES_TLS_CA={}", server.tls_ca.display());
    println!("(PostgreSQL runs until this process is interrupted)");
    let _ = shell::wait_for_interrupt();
    drop(server);
    Ok(())
}
