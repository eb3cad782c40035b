//! Files' bytes in JetStream's object store (docs/BRIDGE.md, "Files"), so
//! that a rule reads what a person attached without calling lattice's API.
//! Each tenant has its bucket, `LATTICE_FILES_<tenant>` (a per-tenant rules
//! user is held to its own), each file an object named by its id. The
//! bytes go in before the message that names them is published, and out
//! after the audit row of their erasure: in log order, like the messages.

use std::collections::HashMap;

use async_nats::jetstream::{self, object_store};
use lattice_core::{Error, FileRef};
use tokio::io::AsyncWriteExt;
use tokio::sync::Mutex;

use crate::found::Found;
use crate::lookups::Lookups;
use crate::projections::FileCopies;

/// Every tenant's bucket is named this and the tenant's id.
pub const BUCKET_PREFIX: &str = "LATTICE_FILES_";

/// The bucket of a tenant's files.
pub fn bucket(tenant: &str) -> String {
    format!("{BUCKET_PREFIX}{tenant}")
}

/// Chunks read from the log's database at a time while a file is copied.
const CHUNKS_AT_ONCE: i64 = 4;

/// Copies files' bytes from the log's database to the object store.
pub struct FileCopier {
    reader: Lookups,
    stores: Mutex<HashMap<String, object_store::ObjectStore>>,
}

impl FileCopier {
    pub(crate) fn new(reader: Lookups) -> Self {
        Self { reader, stores: Mutex::default() }
    }

    /// Does what a message asks of the tenant's files; the files' rows are
    /// in `found` (read for the message's batch), or read now.
    pub(crate) async fn apply(&self, js: &jetstream::Context, tenant: &str, copies: &FileCopies, found: &Found) -> Result<(), Error> {
        match copies {
            FileCopies::None => Ok(()),
            FileCopies::Put(files) if files.is_empty() => Ok(()),
            FileCopies::Put(files) => {
                let store = self.store(js, tenant).await?;
                for file in files {
                    self.put(&store, tenant, file, found).await?;
                }
                Ok(())
            }
            FileCopies::Erase(id) => {
                let store = self.store(js, tenant).await?;
                match store.delete(id).await {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == object_store::DeleteErrorKind::NotFound => Ok(()),
                    Err(e) => Err(Error::unavailable(format!("erasing {id} from the object store: {e}"))),
                }
            }
        }
    }

    /// The tenant's bucket, made when it is missing.
    async fn store(&self, js: &jetstream::Context, tenant: &str) -> Result<object_store::ObjectStore, Error> {
        let name = bucket(tenant);
        let mut stores = self.stores.lock().await;
        if let Some(store) = stores.get(&name) {
            return Ok(store.clone());
        }
        let store = match js.get_object_store(&name).await {
            Ok(store) => store,
            Err(_) => js
                .create_object_store(object_store::Config {
                    bucket: name.clone(),
                    description: Some(format!("the files attached to answers in tenant {tenant}")),
                    storage: jetstream::stream::StorageType::File,
                    ..Default::default()
                })
                .await
                .map_err(|e| Error::unavailable(format!("creating the bucket {name}: {e}")))?,
        };
        stores.insert(name, store.clone());
        Ok(store)
    }

    /// Copies one file, unless it is there already (a retry after a lost
    /// acknowledgement) or its bytes were erased.
    async fn put(&self, store: &object_store::ObjectStore, tenant: &str, file: &FileRef, found: &Found) -> Result<(), Error> {
        if let Ok(info) = store.info(&file.id).await
            && !info.deleted
            && info.size as u64 == file.size
        {
            return Ok(());
        }
        let row = match found.files.get(&(tenant.to_owned(), file.id.clone())) {
            Some(row) => row.clone(),
            None => self.reader.file(tenant, &file.id).await?,
        };
        let Some(row) = row else { return Ok(()) };
        if row.erased_at.is_some() {
            return Ok(());
        }
        // The bytes pass through a pipe a few chunks at a time: a file is
        // never held whole here.
        let (mut writer, mut reading) = tokio::io::duplex(lattice_log::CHUNK_BYTES);
        let feed = async {
            let mut from = 0;
            loop {
                let chunks = self.reader.file_chunks(&row, from, CHUNKS_AT_ONCE).await?;
                // Fewer than asked for are the last: no read to find nothing.
                let last = (chunks.len() as i64) < CHUNKS_AT_ONCE;
                from += chunks.len() as i64;
                for chunk in chunks {
                    writer.write_all(&chunk).await.map_err(|e| Error::unavailable(format!("copying {}: {e}", file.id)))?;
                }
                if last {
                    break;
                }
            }
            writer.shutdown().await.map_err(|e| Error::unavailable(format!("copying {}: {e}", file.id)))?;
            Ok::<_, Error>(())
        };
        let meta = object_store::ObjectMetadata {
            name: file.id.clone(),
            description: Some(file.name.clone()),
            metadata: HashMap::from([("type".to_owned(), file.media_type.clone()), ("sha256".to_owned(), file.sha256.clone())]),
            ..Default::default()
        };
        let (put, fed) = tokio::join!(store.put(meta, &mut reading), feed);
        fed?;
        put.map_err(|e| Error::unavailable(format!("putting {} in the object store: {e}", file.id)))?;
        Ok(())
    }
}
