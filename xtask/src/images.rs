//! Images built `FROM scratch` out of this machine's own binaries, since no
//! registry is reachable here (REQUIREMENTS.md X1): each holds the programs
//! it runs, the libraries `ldd` names for them, and busybox for the health
//! checks compose.yaml runs (`wget`, a shell).
//!
//! They stand in for the public images in the acceptance harness: NATS for
//! testcontainers, and PostgreSQL, NATS and lattice itself for the compose
//! run (`infra/compose.stand-ins.yaml`). The lattice image holds the binary
//! the tests built instead of one `infra/Dockerfile` builds, because that
//! file's base images (`rust`, distroless) cannot be pulled here; it is laid
//! out as that file's runtime stage is (same paths, user, environment).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::Result;
use crate::shell::{apt_install, output, run};

/// nats-server, for testcontainers and compose.
pub const NATS: &str = "lattice-nats:local";
/// PostgreSQL 15 with the official image's entrypoint variables.
pub const POSTGRES: &str = "lattice-postgres:local";
/// The name compose.yaml gives the image `infra/Dockerfile` builds.
pub const LATTICE: &str = "lattice:latest";

const BUSYBOX: &str = "/bin/busybox";

/// The official postgres image's start, for what compose.yaml asks of it:
/// a cluster made on first start with `POSTGRES_USER`'s password and
/// `POSTGRES_DB`, reachable over the network with a password.
const POSTGRES_ENTRYPOINT: &str = r#"#!/bin/sh
set -e
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
  initdb -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile=/tmp/pwfile -A scram-sha-256 -E UTF8 --no-locale > /dev/null
  rm /tmp/pwfile
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  if [ -n "$POSTGRES_DB" ] && [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\";" | postgres --single -D "$PGDATA" postgres > /dev/null
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
"#;

/// A build context being filled: `root/` copied as root, `owned/` as the
/// image's user.
struct Context {
    dir: PathBuf,
    uid: u32,
}

impl Context {
    fn new(name: &str, uid: u32) -> Result<Context> {
        let dir = crate::web::target_dir().join("dockerd").join("images").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["root/bin", "root/tmp", "root/etc", "owned"] {
            std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
        }
        // Anyone's scratch space, as /tmp is.
        std::fs::set_permissions(dir.join("root/tmp"), std::os::unix::fs::PermissionsExt::from_mode(0o1777)).map_err(|e| e.to_string())?;
        let context = Context { dir, uid };
        context.busybox()?;
        Ok(context)
    }

    fn root(&self, path: &str) -> PathBuf {
        self.dir.join("root").join(path.trim_start_matches('/'))
    }

    /// A file or a folder of this machine at the same path in the image,
    /// symbolic links followed; with a program, the libraries it loads.
    fn copy(&self, path: &str) -> Result {
        let target = self.root(path);
        std::fs::create_dir_all(target.parent().expect("an absolute path")).map_err(|e| e.to_string())?;
        run(Command::new("cp").args(["-rL", path]).arg(&target))?;
        if Path::new(path).is_file() {
            self.libraries(path)?;
        }
        Ok(())
    }

    /// A program at another path in the image, with its libraries.
    fn copy_to(&self, from: &Path, to: &str) -> Result {
        let target = self.root(to);
        std::fs::create_dir_all(target.parent().expect("an absolute path")).map_err(|e| e.to_string())?;
        std::fs::copy(from, &target).map_err(|e| format!("copying {}: {e}", from.display()))?;
        self.libraries(&from.to_string_lossy())
    }

    fn libraries(&self, program: &str) -> Result {
        // ldd fails on a static program or a script: nothing to copy then.
        let listed = output(Command::new("ldd").arg(program)).unwrap_or_default();
        for lib in listed.split_whitespace().filter(|w| w.starts_with('/')) {
            let target = self.root(lib);
            if !target.exists() {
                std::fs::create_dir_all(target.parent().expect("an absolute path")).map_err(|e| e.to_string())?;
                std::fs::copy(lib, &target).map_err(|e| format!("copying {lib}: {e}"))?;
            }
        }
        Ok(())
    }

    fn write(&self, path: &str, text: &str) -> Result {
        let target = self.root(path);
        std::fs::create_dir_all(target.parent().expect("an absolute path")).map_err(|e| e.to_string())?;
        std::fs::write(&target, text).map_err(|e| e.to_string())
    }

    /// An empty folder the image's user owns (a volume's mount point, a socket's folder).
    fn owned_folder(&self, path: &str) -> Result {
        std::fs::create_dir_all(self.dir.join("owned").join(path.trim_start_matches('/'))).map_err(|e| e.to_string())
    }

    /// busybox and the applets compose.yaml's health checks call.
    fn busybox(&self) -> Result {
        // The static build: ldd refuses it, and it needs nothing beside it.
        if !Path::new(BUSYBOX).exists() || output(Command::new("ldd").arg(BUSYBOX)).is_ok() {
            apt_install(&["busybox-static"])?;
        }
        std::fs::copy(BUSYBOX, self.root("/bin/busybox")).map_err(|e| e.to_string())?;
        for applet in ["sh", "wget", "cat", "rm", "printf", "echo", "ls"] {
            std::os::unix::fs::symlink("busybox", self.root(&format!("/bin/{applet}"))).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn user(&self, name: &str, home: &str) -> Result {
        let uid = self.uid;
        self.write("/etc/passwd", &format!("root:x:0:0:root:/root:/bin/sh\n{name}:x:{uid}:{uid}::{home}:/bin/sh\n"))?;
        self.write("/etc/group", &format!("root:x:0:\n{name}:x:{uid}:\n"))
    }

    fn build(&self, tag: &str, instructions: &str, host: &str) -> Result {
        let uid = self.uid;
        let dockerfile = format!(
            "FROM scratch\nCOPY root/ /\nCOPY --chown={uid}:{uid} owned/ /\nENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n{instructions}"
        );
        std::fs::write(self.dir.join("Dockerfile"), dockerfile).map_err(|e| e.to_string())?;
        run(Command::new(docker()).env("DOCKER_HOST", host).args(["build", "--quiet", "-t", tag]).arg(&self.dir).stdout(Stdio::null()))?;
        // The image this tag named before, kept by nothing now.
        run(Command::new(docker()).env("DOCKER_HOST", host).args(["image", "prune", "--force"]).stdout(Stdio::null()))
    }
}

/// `lattice-nats:local`: nats-server 2.15 (PyPI's build, as for the
/// configuration checks; Debian's 2.9 does not take the durable
/// configuration), run as root as the official image runs it.
pub fn nats(host: &str) -> Result {
    let server = PathBuf::from(crate::bench::durable_nats()?);
    let context = Context::new("nats", 0)?;
    context.copy_to(&server, "/nats-server")?;
    context.build(NATS, "ENTRYPOINT [\"/nats-server\"]\n", host)
}

/// `lattice-postgres:local`: Debian's PostgreSQL 15 at its own paths, as
/// user 999 as the official image runs it.
pub fn postgres(host: &str) -> Result {
    let bin = "/usr/lib/postgresql/15/bin";
    if !Path::new(bin).exists() {
        return Err(format!("no PostgreSQL 15 at {bin} to put in an image"));
    }
    let context = Context::new("postgres", 999)?;
    for program in ["postgres", "initdb", "pg_isready"] {
        context.copy(&format!("{bin}/{program}"))?;
    }
    // The loadable modules, without the JIT (it would bring LLVM along).
    for module in std::fs::read_dir("/usr/lib/postgresql/15/lib").map_err(|e| e.to_string())?.flatten() {
        let name = module.file_name().to_string_lossy().into_owned();
        if !name.starts_with("llvmjit") && name != "bitcode" {
            context.copy(&module.path().to_string_lossy())?;
        }
    }
    context.copy("/usr/share/postgresql/15")?;
    context.copy("/usr/share/zoneinfo")?;
    context.user("postgres", "/var/lib/postgresql")?;
    context.write("/usr/local/bin/docker-entrypoint.sh", POSTGRES_ENTRYPOINT)?;
    run(Command::new("chmod").arg("755").arg(context.root("/usr/local/bin/docker-entrypoint.sh")))?;
    context.owned_folder("/var/lib/postgresql/data")?;
    context.owned_folder("/var/run/postgresql")?;
    let env = format!("ENV PATH={bin}:/usr/local/bin:/usr/bin:/bin PGDATA=/var/lib/postgresql/data\n");
    context.build(POSTGRES, &format!("{env}USER 999\nEXPOSE 5432\nENTRYPOINT [\"/usr/local/bin/docker-entrypoint.sh\"]\n"), host)
}

/// `lattice:latest`: the `lattice` the tests built and the chat host, laid
/// out as `infra/Dockerfile`'s runtime stage lays them out.
pub fn lattice(host: &str) -> Result {
    let target = crate::web::target_dir();
    let binary = target.join("debug").join("lattice");
    let web = target.join("web");
    if !binary.exists() || !web.exists() {
        return Err(format!("build {} and {} first", binary.display(), web.display()));
    }
    let context = Context::new("lattice", 65532)?;
    context.copy_to(&binary, "/usr/local/bin/lattice")?;
    std::fs::create_dir_all(context.root("/usr/share/lattice")).map_err(|e| e.to_string())?;
    run(Command::new("cp").arg("-r").arg(&web).arg(context.root("/usr/share/lattice/web")))?;
    context.copy("/etc/ssl/certs/ca-certificates.crt")?;
    context.user("nonroot", "/home/nonroot")?;
    context.owned_folder("/var/lib/lattice")?;
    let instructions = "USER 65532\nWORKDIR /var/lib/lattice\nENV LATTICE_DATA_DIR=/var/lib/lattice LATTICE_WEB_DIR=/usr/share/lattice/web\nEXPOSE 8080 8081\nENTRYPOINT [\"lattice\"]\nCMD [\"serve\", \"log\"]\n";
    context.build(LATTICE, instructions, host)
}

/// The docker CLI: the system's, else whichever is on `PATH`.
fn docker() -> &'static str {
    if Path::new("/usr/bin/docker").exists() { "/usr/bin/docker" } else { "docker" }
}
