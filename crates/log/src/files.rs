//! Files people attach to their answers (docs/FILES.md): uploaded in a
//! thread by whoever may answer its forms, while forms are on there; their
//! bytes streamed into chunks beside the log as they arrive, bounded per
//! file and per tenant while they arrive (never after); their type decided
//! from their content, never from what the client says; read by whoever
//! may read the thread; erased by a workspace admin (the row stays, saying
//! so, and the log's references stay whole).

use lattice_core::policy::Action;
use lattice_core::{Error, FileRef, Integrations, SharedClock, SwitchKey, ThreadId};
use sha2::Digest;

use crate::access::thread_access;
use crate::auth::Authenticated;
use crate::store::Db;
use crate::store::files::{self as stored, FileRow};
use crate::switches::SwitchStore;

/// A file id's prefix.
pub const FILE_PREFIX: &str = lattice_core::FileId::PREFIX;
/// The audit row of a file's erasure: the bridge takes the file's bytes
/// out of the object store when it passes it.
pub const FILE_ERASED: &str = "file_erased";
/// The bytes a chunk holds (the last may hold fewer).
pub const CHUNK_BYTES: usize = 256 * 1024;
/// The longest name kept, in bytes.
pub const NAME_MAX: usize = 255;
/// An upload not finished after this long was cut off with its service
/// (a request's own time bound ends it long before).
const STALE_UPLOAD_MS: i64 = 60 * 60 * 1000;
/// Chunks read back at a time to digest a resumable upload (1 MiB).
const DIGEST_CHUNKS: i64 = 4;
/// The bytes read to decide a file's type.
const SNIFF_BYTES: usize = 8 * 1024;

/// What files may hold: per file, and per tenant in bytes and in files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileLimits {
    pub max_bytes: u64,
    pub quota_bytes: u64,
    pub quota_files: u64,
}

impl Default for FileLimits {
    fn default() -> Self {
        Self { max_bytes: 10 * 1024 * 1024, quota_bytes: 1024 * 1024 * 1024, quota_files: 10_000 }
    }
}

impl FileRow {
    /// What the log keeps of the file: the reference a submission carries.
    pub fn reference(&self) -> FileRef {
        FileRef { id: self.id.clone(), name: self.name.clone(), media_type: self.media_type.clone(), size: self.size, sha256: self.sha256.clone() }
    }
}

/// The files of the log's database.
#[derive(Clone)]
pub struct Files {
    db: Db,
    clock: SharedClock,
    switches: SwitchStore,
    limits: FileLimits,
}

impl Files {
    pub(crate) fn new(db: Db, clock: SharedClock, switches: SwitchStore, limits: FileLimits) -> Self {
        Self { db, clock, switches, limits }
    }

    pub fn limits(&self) -> FileLimits {
        self.limits
    }

    /// Starts an upload named `name` in `thread`, by someone who may answer
    /// its forms while forms are on there, within the tenant's quota.
    pub async fn upload(&self, who: &Authenticated, thread: &ThreadId, name: &str) -> Result<Upload, Error> {
        let (row, room) = self.begin(who, thread, name, 0).await?;
        let mut upload = Upload::new(self.db.clone(), row, self.limits.max_bytes, room);
        upload.quota_bytes = self.limits.quota_bytes;
        Ok(upload)
    }

    /// Starts a resumable upload of `size` bytes (docs/FILES.md,
    /// "Resumable uploads"): its room is reserved now, and its bytes come
    /// in one part or several ([`Files::resume`]), each from where the
    /// bytes stored end. Its row, whose id the parts name.
    pub async fn begin_resumable(&self, who: &Authenticated, thread: &ThreadId, name: &str, size: u64) -> Result<FileRow, Error> {
        if size == 0 {
            return Err(Error::field("size", "minimum", "a resumable upload has at least 1 byte"));
        }
        if size > self.limits.max_bytes {
            return Err(Error::too_large(lattice_core::Code::FileTooLarge, self.limits.max_bytes, size));
        }
        // Refused in `begin` when the room does not hold it.
        let (row, _) = self.begin(who, thread, name, size).await?;
        Ok(row)
    }

    /// A resumable upload under way, for its uploader while they may still
    /// answer its thread's forms: its row and the bytes stored so far.
    pub async fn resumable(&self, who: &Authenticated, id: &str) -> Result<(FileRow, u64), Error> {
        let (row, bytes, _) = self.resumable_at(who, id).await?;
        Ok((row, bytes))
    }

    /// [`Files::resumable`] with the chunks stored, read in the same
    /// statement as the bytes: read apart, another part could store a
    /// chunk between them, and this part would write past the end while
    /// believing it wrote from the start.
    async fn resumable_at(&self, who: &Authenticated, id: &str) -> Result<(FileRow, u64, i64), Error> {
        let p = who.principal();
        let row = stored::head(&self.db, p.tenant.as_str(), id)
            .await?
            .filter(|r| !r.complete && r.size > 0 && r.uploader == p.user.as_str())
            .ok_or(Error::NotFound)?;
        let access = thread_access(&self.db, p, &ThreadId::from_trusted(row.thread.clone())).await?;
        access.allow(Action::Submit)?;
        if !self.switches.effective(&access.tenant, &access.workspace, SwitchKey::Forms).await?.enabled {
            return Err(Error::NotEnabled { key: SwitchKey::Forms.as_str().to_owned() });
        }
        let (bytes, chunks) = stored::stored(&self.db, &row.tenant, &row.id).await?;
        Ok((row, bytes, chunks))
    }

    /// Takes up a resumable upload at `offset`, which must be where its
    /// stored bytes end (409 says where, else).
    pub async fn resume(&self, who: &Authenticated, id: &str, offset: u64) -> Result<Upload, Error> {
        let (row, bytes, chunks) = self.resumable_at(who, id).await?;
        if offset != bytes {
            return Err(Error::Conflict {
                code: lattice_core::Code::UploadOffset,
                reason: format!("the upload holds {bytes} bytes: send from there"),
                expected: Some(offset),
                actual: Some(bytes),
            });
        }
        let mut head = stored::chunks(&self.db, &row.tenant, &row.id, 0, 1).await?.into_iter().next().unwrap_or_default();
        head.truncate(SNIFF_BYTES);
        let declared = row.size;
        let mut upload = Upload::new(self.db.clone(), row, declared, declared);
        upload.resumable = true;
        upload.next = chunks;
        upload.size = bytes;
        upload.head = head;
        Ok(upload)
    }

    /// Checks who may upload to `thread` and the tenant's quota, and writes
    /// the new file's row (`size`: 0, or what a resumable upload declared);
    /// answers it with the room that was left before it.
    async fn begin(&self, who: &Authenticated, thread: &ThreadId, name: &str, size: u64) -> Result<(FileRow, u64), Error> {
        let p = who.principal();
        let access = thread_access(&self.db, p, thread).await?;
        access.allow(Action::Submit)?;
        let forms = self.switches.effective(&access.tenant, &access.workspace, SwitchKey::Forms).await?;
        if !forms.enabled {
            return Err(Error::NotEnabled { key: SwitchKey::Forms.as_str().to_owned() });
        }
        // An upload whose service stopped under it is forgotten once it
        // is older than any request may last.
        stored::forget_stale(&self.db, p.tenant.as_str(), self.clock.now_ms() - STALE_UPLOAD_MS).await?;
        let row = FileRow {
            tenant: p.tenant.to_string(),
            id: lattice_core::FileId::generate().to_string(),
            workspace: access.workspace.to_string(),
            thread: thread.to_string(),
            uploader: p.user.to_string(),
            name: file_name(name),
            media_type: String::new(),
            size,
            sha256: String::new(),
            complete: false,
            created_at: self.clock.now_ms(),
            erased_at: None,
            erased_by: None,
        };
        let quota = stored::Quota { files: self.limits.quota_files, bytes: self.limits.quota_bytes };
        let room = stored::begin(&self.db, &row, quota).await?;
        Ok((row, room))
    }

    /// A file's row, for whoever may read its thread; an upload under way
    /// is nobody's yet.
    pub async fn head(&self, who: &Authenticated, id: &str) -> Result<FileRow, Error> {
        let p = who.principal();
        let row = stored::head(&self.db, p.tenant.as_str(), id).await?.filter(|r| r.complete).ok_or(Error::NotFound)?;
        thread_access(&self.db, p, &ThreadId::from_trusted(row.thread.clone())).await?.allow(Action::Read)?;
        Ok(row)
    }

    /// A file's bytes, `limit` chunks from chunk `from`.
    pub async fn chunks(&self, row: &FileRow, from: i64, limit: i64) -> Result<Vec<Vec<u8>>, Error> {
        stored::chunks(&self.db, &row.tenant, &row.id, from, limit).await
    }

    pub(crate) fn db(&self) -> &Db {
        &self.db
    }

    pub(crate) fn now_ms(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// An upload under way: bytes are pushed as they arrive, written a chunk
/// at a time, and refused the moment they pass the file's limit or the
/// tenant's room. Dropped without [`Upload::finish`] (its request cut off
/// by its time bound, or its client gone), it forgets itself.
pub struct Upload {
    db: Db,
    row: FileRow,
    max: u64,
    room: u64,
    pending: Vec<u8>,
    next: i64,
    size: u64,
    digest: sha2::Sha256,
    head: Vec<u8>,
    done: bool,
    /// Its bytes come in parts, across requests: cut off, it keeps what
    /// it stored, and its digest is taken of the stored bytes at the end.
    resumable: bool,
    /// The tenant's bytes, checked at each chunk a streamed upload stores.
    quota_bytes: u64,
}

impl Upload {
    fn new(db: Db, row: FileRow, max: u64, room: u64) -> Self {
        Self {
            db,
            row,
            max,
            room,
            pending: Vec::with_capacity(CHUNK_BYTES),
            next: 0,
            size: 0,
            digest: sha2::Sha256::new(),
            head: Vec::new(),
            done: false,
            resumable: false,
            quota_bytes: u64::MAX,
        }
    }

    /// The bytes taken so far (a resumable upload's from its start).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The bytes a resumable upload declared.
    pub fn declared(&self) -> u64 {
        self.row.size
    }

    /// Whether a resumable upload has all the bytes it declared.
    pub fn is_whole(&self) -> bool {
        self.resumable && self.size == self.row.size
    }

    /// Ends a part of a resumable upload: what it took is stored (its last
    /// bytes a short chunk), and the next part starts where they end.
    pub async fn pause(mut self) -> Result<u64, Error> {
        self.done = true;
        self.flush().await?;
        Ok(self.size)
    }
    pub fn id(&self) -> &str {
        &self.row.id
    }

    /// Takes the next bytes; refuses (and forgets the upload) once they
    /// pass a bound.
    pub async fn push(&mut self, mut bytes: &[u8]) -> Result<(), Error> {
        let size = self.size + bytes.len() as u64;
        if size > self.max && self.resumable {
            // More than it declared: the part is refused, what was stored stays.
            self.done = true;
            return Err(Error::too_large(lattice_core::Code::FileTooLarge, self.max, size));
        }
        if size > self.max {
            self.abandon_now().await;
            return Err(Error::too_large(lattice_core::Code::FileTooLarge, self.max, size));
        }
        if size > self.room {
            self.abandon_now().await;
            return Err(Error::too_large(lattice_core::Code::QuotaExceeded, self.room, size));
        }
        self.size = size;
        self.digest.update(bytes);
        if self.head.len() < SNIFF_BYTES {
            let take = (SNIFF_BYTES - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        while !bytes.is_empty() {
            let take = (CHUNK_BYTES - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() == CHUNK_BYTES {
                self.flush().await?;
            }
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.resumable {
            // Its room was reserved as it began.
            stored::chunk(&self.db, &self.row.tenant, &self.row.id, self.next, &self.pending).await?;
        } else {
            // Every chunk flushed before is whole.
            let before = self.next as u64 * CHUNK_BYTES as u64;
            let written = stored::streamed_chunk(&self.db, &self.row.tenant, &self.row.id, self.next, &self.pending, before, self.quota_bytes).await;
            if let Err(e) = written {
                self.abandon_now().await;
                return Err(e);
            }
        }
        self.next += 1;
        self.pending.clear();
        Ok(())
    }

    /// The file whole, its type decided from its content: its reference.
    pub async fn finish(mut self) -> Result<FileRef, Error> {
        self.flush().await?;
        if self.resumable {
            // Its parts came in several requests: the digest is of what
            // was stored, read back a chunk at a time.
            if self.size != self.row.size {
                self.done = true;
                return Err(Error::invalid_state(
                    lattice_core::Code::UploadIncomplete,
                    format!("the upload holds {} of its {} bytes", self.size, self.row.size),
                ));
            }
            self.digest = sha2::Sha256::new();
            for from in (0..self.next).step_by(DIGEST_CHUNKS as usize) {
                for chunk in stored::chunks(&self.db, &self.row.tenant, &self.row.id, from, DIGEST_CHUNKS).await? {
                    self.digest.update(&chunk);
                }
            }
        }
        let media_type = sniff(&self.head, self.size as usize <= self.head.len());
        let sha256: String = self.digest.clone().finalize().iter().map(|b| format!("{b:02x}")).collect();
        stored::finish(&self.db, &self.row.tenant, &self.row.id, media_type, self.size, &sha256).await?;
        self.done = true;
        self.row.media_type = media_type.to_owned();
        self.row.size = self.size;
        self.row.sha256 = sha256;
        Ok(self.row.reference())
    }

    /// Forgets an upload cut off or refused.
    pub async fn abandon(mut self) {
        self.abandon_now().await;
    }

    async fn abandon_now(&mut self) {
        if !self.done {
            self.done = true;
            if let Err(e) = stored::abandon(&self.db, &self.row.tenant, &self.row.id).await {
                tracing::warn!(file = %self.row.id, error = %e, "cannot forget an abandoned upload");
            }
        }
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        // A resumable upload keeps what it stored, for its next part.
        if self.done || self.resumable {
            return;
        }
        // Dropped mid-way: what it wrote is forgotten beside the request
        // that ended, or, with no runtime left, by the next upload's sweep.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (db, tenant, id) = (self.db.clone(), self.row.tenant.clone(), self.row.id.clone());
            runtime.spawn(async move {
                if let Err(e) = stored::abandon(&db, &tenant, &id).await {
                    tracing::warn!(file = %id, error = %e, "cannot forget an upload cut off");
                }
            });
        }
    }
}

/// A name as kept: its last path segment, cleaned by the one rule for
/// names (`lattice_core::name::clean`), no leading dot, at most
/// [`NAME_MAX`] bytes (cut at a character), `file` if nothing is left.
pub fn file_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    // A device's name for a file is taken as it comes, what would make it
    // read as another taken out (lattice_core::name).
    let clean = lattice_core::name::clean(last);
    let mut kept = clean.trim_start_matches('.').trim().to_owned();
    while kept.len() > NAME_MAX {
        kept.pop();
    }
    if kept.is_empty() { "file".to_owned() } else { kept }
}

/// A file's type from its first bytes: a known signature's, else text if
/// it reads as UTF-8 with no NUL, else bytes. `whole`: `head` is the whole
/// file (a last character cut short is not forgiven then).
pub fn sniff(head: &[u8], whole: bool) -> &'static str {
    if let Some(kind) = infer::get(head) {
        return kind.mime_type();
    }
    let text = match std::str::from_utf8(head) {
        Ok(_) => true,
        // A character cut at the end of what was read.
        Err(e) => !whole && e.error_len().is_none() && head.len() - e.valid_up_to() < 4,
    };
    if text && !head.contains(&0) { "text/plain" } else { "application/octet-stream" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_keeps_its_last_segment_and_no_control_characters() {
        assert_eq!(file_name("../../etc/passwd"), "passwd");
        assert_eq!(file_name("C:\\\\Users\\\\me\\\\shot.png"), "shot.png");
        assert_eq!(file_name("a\u{0}b\nc.txt"), "abc.txt");
        assert_eq!(file_name(".."), "file");
        assert_eq!(file_name(""), "file");
        assert_eq!(file_name(&"é".repeat(200)).len(), 254);
    }

    #[test]
    fn a_type_comes_from_the_content() {
        let png = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d];
        assert_eq!(sniff(&png, true), "image/png");
        assert_eq!(sniff(b"%PDF-1.7\n", true), "application/pdf");
        assert_eq!(sniff(b"hello, world\n", true), "text/plain");
        assert_eq!(sniff(b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>", true), "text/plain");
        assert_eq!(sniff(&[0, 1, 2, 3], true), "application/octet-stream");
        assert_eq!(sniff("é".as_bytes().get(..1).unwrap(), false), "text/plain", "a character cut where reading stopped");
        assert_eq!(sniff("é".as_bytes().get(..1).unwrap(), true), "application/octet-stream");
    }
}
