//! What belongs to a person across a tenant: their entry in the tenant's
//! directory (`people`), their last sign-out, and the writers that change
//! them: provisioning, a sign-in, a removal, the end of their sessions.

use lattice_core::directory::{ProvisionedPerson, SignedInPerson};
use lattice_core::event::{Event, PersonRemoved, PersonSaved, SessionsEnded};
use lattice_core::identity::GroupRules;
use lattice_core::{Error, TenantId, TenantRole};
use sqlx::{AnyConnection, Row};

use super::db::{Db, budget_turn, db_error, unique_or};
use super::sessions::owner_key;
use super::writing::Writing;

/// What the store says of a person for a request of theirs: their last
/// sign-out, and their directory entry's state and role if they have one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct PersonStanding {
    pub signed_out_at: Option<i64>,
    pub listed: Option<(bool, TenantRole)>,
}

/// One statement: a request's person read once, however many questions.
pub(crate) async fn standing(db: &Db, tenant: &str, user: &str) -> Result<PersonStanding, Error> {
    let row = sqlx::query(
        "SELECT (SELECT at FROM sign_outs WHERE tenant = $1 AND user_id = $2), \
                (SELECT active FROM people WHERE tenant = $1 AND user_id = $2), \
                (SELECT role FROM people WHERE tenant = $1 AND user_id = $2)",
    )
    .bind(tenant)
    .bind(user)
    .fetch_one(&db.pool)
    .await
    .map_err(db_error)?;
    let signed_out_at: Option<i64> = row.try_get(0).map_err(db_error)?;
    let active: Option<i64> = row.try_get(1).map_err(db_error)?;
    let role: Option<String> = row.try_get(2).map_err(db_error)?;
    Ok(PersonStanding { signed_out_at, listed: active.zip(role).map(|(active, role)| (active != 0, parse_role(&role))) })
}

fn parse_role(role: &str) -> TenantRole {
    serde_json::from_value(serde_json::Value::String(role.to_owned())).unwrap_or_default()
}

/// A person's directory entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PersonRow {
    pub user: String,
    pub user_name: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub external_id: Option<String>,
    pub active: bool,
    pub role: TenantRole,
    /// The groups a provider's token named at their last sign-in.
    pub claimed_groups: Vec<String>,
    /// The SCIM resource as provisioned; `None` for a person who only
    /// signed in.
    pub document: Option<serde_json::Value>,
    pub version: u64,
    pub created_at: i64,
    pub updated_at: i64,
}

const PERSON_COLUMNS: &str =
    "user_id, user_name, display_name, email, external_id, active, role, claimed_groups, document, version, created_at, updated_at";

fn person_row(row: &sqlx::any::AnyRow) -> Result<PersonRow, Error> {
    let get_text = |i: usize| row.try_get::<Option<String>, _>(i).map_err(db_error);
    let claimed: String = row.try_get(7).map_err(db_error)?;
    let document =
        get_text(8)?.map(|d| lattice_core::json::from_str(&d)).transpose().map_err(|_| Error::unavailable("a directory entry does not read back"))?;
    Ok(PersonRow {
        user: row.try_get(0).map_err(db_error)?,
        user_name: row.try_get(1).map_err(db_error)?,
        display_name: get_text(2)?,
        email: get_text(3)?,
        external_id: get_text(4)?,
        active: row.try_get::<i64, _>(5).map_err(db_error)? != 0,
        role: parse_role(&row.try_get::<String, _>(6).map_err(db_error)?),
        claimed_groups: serde_json::from_str(&claimed).unwrap_or_default(),
        document,
        version: row.try_get::<i64, _>(9).map_err(db_error)?.max(0) as u64,
        created_at: row.try_get(10).map_err(db_error)?,
        updated_at: row.try_get(11).map_err(db_error)?,
    })
}

/// How names are compared: SCIM's `userName` is unique whatever its case
/// and however its characters were composed (`lattice_core::name::key`).
pub(crate) fn name_key(name: &str) -> String {
    lattice_core::name::key(name)
}

pub(crate) async fn person(db: &Db, tenant: &str, user: &str) -> Result<Option<PersonRow>, Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM people WHERE tenant = $1 AND user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(user).fetch_optional(&db.pool).await.map_err(db_error)?;
    row.as_ref().map(person_row).transpose()
}

/// The person whose user name is `name`, whatever its case.
pub(crate) async fn person_named(db: &Db, tenant: &str, name: &str) -> Result<Option<PersonRow>, Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM people WHERE tenant = $1 AND user_name_key = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(name_key(name)).fetch_optional(&db.pool).await.map_err(db_error)?;
    row.as_ref().map(person_row).transpose()
}

/// The id of the person whose user name is `name`, whatever its case.
pub(crate) async fn id_named(db: &Db, tenant: &str, name: &str) -> Result<Option<String>, Error> {
    sqlx::query_scalar("SELECT user_id FROM people WHERE tenant = $1 AND user_name_key = $2")
        .bind(tenant)
        .bind(name_key(name))
        .fetch_optional(&db.pool)
        .await
        .map_err(db_error)
}

/// Up to `limit` people of the tenant after `after` (by id), in id order.
pub(crate) async fn people_page(db: &Db, tenant: &str, after: &str, limit: i64) -> Result<Vec<PersonRow>, Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM people WHERE tenant = $1 AND user_id > $2 ORDER BY user_id LIMIT $3");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(after).bind(limit).fetch_all(&db.pool).await.map_err(db_error)?;
    rows.iter().map(person_row).collect()
}

/// Up to `limit` people of the tenant from the `offset`th, in id order: a
/// page of an unfiltered list.
pub(crate) async fn people_at(db: &Db, tenant: &str, offset: i64, limit: i64) -> Result<(Vec<PersonRow>, i64), Error> {
    let total: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM people WHERE tenant = $1").bind(tenant).fetch_one(&db.pool).await.map_err(db_error)?;
    let sql = format!("SELECT {PERSON_COLUMNS} FROM people WHERE tenant = $1 ORDER BY user_id LIMIT $2 OFFSET $3");
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(limit).bind(offset).fetch_all(&db.pool).await.map_err(db_error)?;
    Ok((rows.iter().map(person_row).collect::<Result<_, _>>()?, total))
}

pub(crate) async fn count_people(conn: &mut AnyConnection, tenant: &str) -> Result<i64, Error> {
    sqlx::query_scalar("SELECT COUNT(*) FROM people WHERE tenant = $1").bind(tenant).fetch_one(&mut *conn).await.map_err(db_error)
}

/// The display names of the directory groups a person is in.
pub(crate) async fn group_names_of(conn: &mut AnyConnection, tenant: &str, user: &str) -> Result<Vec<String>, Error> {
    sqlx::query_scalar(
        "SELECT g.display_name FROM group_members m JOIN directory_groups g ON g.tenant = m.tenant AND g.id = m.group_id \
         WHERE m.tenant = $1 AND m.user_id = $2",
    )
    .bind(tenant)
    .bind(user)
    .fetch_all(&mut *conn)
    .await
    .map_err(db_error)
}

/// The tenant role a person's groups give: their directory groups and the
/// groups their last sign-in's token named, by the rules.
pub(crate) async fn role_of(conn: &mut AnyConnection, rules: &GroupRules, tenant: &str, user: &str, claimed: &[String]) -> Result<TenantRole, Error> {
    let mut groups = group_names_of(conn, tenant, user).await?;
    groups.extend(claimed.iter().cloned());
    let tenant = TenantId::from_trusted(tenant.to_owned());
    Ok(rules.tenant_role(&tenant, &groups))
}

/// What a stored person's row holds now, read inside a writer's transaction.
async fn person_in(conn: &mut AnyConnection, tenant: &str, user: &str) -> Result<Option<PersonRow>, Error> {
    let sql = format!("SELECT {PERSON_COLUMNS} FROM people WHERE tenant = $1 AND user_id = $2");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(user).fetch_optional(&mut *conn).await.map_err(db_error)?;
    row.as_ref().map(person_row).transpose()
}

/// Another person of the tenant already has this user name.
fn name_taken(name: &str) -> Error {
    Error::conflict(lattice_core::Code::UserNameTaken, format!("another person of the tenant has the user name {name:?}"))
}

/// Creates or replaces a person provisioned over SCIM.
pub(crate) async fn provision_person(
    conn: &mut AnyConnection,
    w: &Writing<'_>,
    rules: &GroupRules,
    user: &str,
    person: &ProvisionedPerson,
    create: bool,
    expected_version: Option<u64>,
) -> Result<Event, Error> {
    let now = person_in(conn, w.tenant, user).await?;
    let clash = person_named_in(conn, w.tenant, &person.user_name).await?;
    if clash.as_deref().is_some_and(|other| other != user) {
        return Err(name_taken(&person.user_name));
    }
    let document = serde_json::to_string(&person.document).map_err(|_| Error::unavailable("a directory entry does not serialize"))?;
    let version = match (&now, create) {
        (Some(_), true) => return Err(name_taken(&person.user_name)),
        (None, false) => return Err(Error::NotFound),
        (Some(row), false) => {
            if let Some(expected) = expected_version
                && expected != row.version
            {
                return Err(Error::version_conflict(expected, row.version));
            }
            row.version + 1
        }
        (None, true) => {
            budget_turn(conn, &format!("people:{}", w.tenant)).await?;
            if count_people(conn, w.tenant).await? >= lattice_core::directory::MAX_PEOPLE as i64 {
                return Err(Error::field(
                    "userName",
                    "limit",
                    format!("the tenant's directory holds {} people, its limit", lattice_core::directory::MAX_PEOPLE),
                ));
            }
            1
        }
    };
    let claimed = now.as_ref().map(|r| r.claimed_groups.clone()).unwrap_or_default();
    let role = role_of(conn, rules, w.tenant, user, &claimed).await?;
    let claimed_json = serde_json::to_string(&claimed).unwrap_or_else(|_| "[]".into());
    sqlx::query(
        "INSERT INTO people (tenant, user_id, user_name, user_name_key, display_name, email, external_id, active, role, claimed_groups, \
         document, version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13) \
         ON CONFLICT (tenant, user_id) DO UPDATE SET user_name = excluded.user_name, user_name_key = excluded.user_name_key, \
         display_name = excluded.display_name, email = excluded.email, external_id = excluded.external_id, active = excluded.active, \
         role = excluded.role, document = excluded.document, version = excluded.version, updated_at = excluded.updated_at",
    )
    .bind(w.tenant)
    .bind(user)
    .bind(&person.user_name)
    .bind(name_key(&person.user_name))
    .bind(person.display_name.as_deref())
    .bind(person.email.as_deref())
    .bind(person.external_id.as_deref())
    .bind(i64::from(person.active))
    .bind(role_name(role))
    .bind(&claimed_json)
    .bind(&document)
    .bind(version as i64)
    .bind(w.at)
    .execute(&mut *conn)
    .await
    .map_err(|e| unique_or(e, || name_taken(&person.user_name)))?;
    if !person.active {
        end_all(conn, w, user).await?;
    }
    Ok(PersonSaved { user: user.to_owned(), active: person.active, role, by: "scim".into(), version }.into())
}

/// Records a sign-in: the person made at their first (active, named as the
/// token names them), their claimed groups kept; a person provisioned over
/// SCIM keeps the name and address SCIM gave. An inactive person is refused.
pub(crate) async fn record_sign_in(conn: &mut AnyConnection, w: &Writing<'_>, rules: &GroupRules, person: &SignedInPerson) -> Result<Event, Error> {
    let user = w.user;
    let now = person_in(conn, w.tenant, user).await?;
    if now.as_ref().is_some_and(|row| !row.active) {
        return Err(Error::unauthorized(
            lattice_core::Code::PersonDeactivated,
            format!("{user} is deactivated in the tenant's directory: ask the tenant's admin"),
        ));
    }
    let claimed_json = serde_json::to_string(&person.groups).unwrap_or_else(|_| "[]".into());
    let role = role_of(conn, rules, w.tenant, user, &person.groups).await?;
    let version = match &now {
        Some(row) => {
            let provisioned = row.document.is_some();
            sqlx::query(
                "UPDATE people SET claimed_groups = $3, role = $4, version = version + 1, updated_at = $5, \
                 display_name = CASE WHEN $6 = 1 THEN display_name ELSE $7 END, email = CASE WHEN $6 = 1 THEN email ELSE $8 END \
                 WHERE tenant = $1 AND user_id = $2",
            )
            .bind(w.tenant)
            .bind(user)
            .bind(&claimed_json)
            .bind(role_name(role))
            .bind(w.at)
            .bind(i64::from(provisioned))
            .bind(person.display_name.as_deref())
            .bind(person.email.as_deref())
            .execute(&mut *conn)
            .await
            .map_err(db_error)?;
            row.version + 1
        }
        None => {
            if person_named_in(conn, w.tenant, &person.user_name).await?.is_some() {
                return Err(name_taken(&person.user_name));
            }
            // A first sign-in adds a person: within the directory's bound,
            // as a provisioned one is.
            budget_turn(conn, &format!("people:{}", w.tenant)).await?;
            if count_people(conn, w.tenant).await? >= lattice_core::directory::MAX_PEOPLE as i64 {
                return Err(Error::field(
                    "user_name",
                    "limit",
                    format!("the tenant's directory holds {} people, its limit", lattice_core::directory::MAX_PEOPLE),
                ));
            }
            sqlx::query(
                "INSERT INTO people (tenant, user_id, user_name, user_name_key, display_name, email, external_id, active, role, claimed_groups, \
                 document, version, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, NULL, 1, $7, $8, NULL, 1, $9, $9)",
            )
            .bind(w.tenant)
            .bind(user)
            .bind(&person.user_name)
            .bind(name_key(&person.user_name))
            .bind(person.display_name.as_deref())
            .bind(person.email.as_deref())
            .bind(role_name(role))
            .bind(&claimed_json)
            .bind(w.at)
            .execute(&mut *conn)
            .await
            .map_err(|e| unique_or(e, || name_taken(&person.user_name)))?;
            1
        }
    };
    Ok(PersonSaved { user: user.to_owned(), active: true, role, by: "sign_in".into(), version }.into())
}

/// Takes a person out of the directory and out of its groups, and ends
/// every token and session of theirs.
pub(crate) async fn remove_person(conn: &mut AnyConnection, w: &Writing<'_>, user: &str) -> Result<Event, Error> {
    let removed =
        sqlx::query("DELETE FROM people WHERE tenant = $1 AND user_id = $2").bind(w.tenant).bind(user).execute(&mut *conn).await.map_err(db_error)?;
    if removed.rows_affected() == 0 {
        return Err(Error::NotFound);
    }
    sqlx::query("DELETE FROM group_members WHERE tenant = $1 AND user_id = $2")
        .bind(w.tenant)
        .bind(user)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    end_all(conn, w, user).await?;
    Ok(PersonRemoved { user: user.to_owned() }.into())
}

/// The id of the person named `name` (whatever its case), inside a writer.
async fn person_named_in(conn: &mut AnyConnection, tenant: &str, name: &str) -> Result<Option<String>, Error> {
    sqlx::query_scalar("SELECT user_id FROM people WHERE tenant = $1 AND user_name_key = $2")
        .bind(tenant)
        .bind(name_key(name))
        .fetch_optional(&mut *conn)
        .await
        .map_err(db_error)
}

pub(crate) fn role_name(role: TenantRole) -> &'static str {
    role.as_str()
}

/// Ends every token of `user` issued until now, their sign-in sessions, and
/// the protocol sessions they opened (an MCP session whose row is gone
/// ends).
async fn end_all(conn: &mut AnyConnection, w: &Writing<'_>, user: &str) -> Result<(), Error> {
    sqlx::query(
        "INSERT INTO sign_outs (tenant, user_id, at) VALUES ($1, $2, $3) \
         ON CONFLICT (tenant, user_id) DO UPDATE SET at = excluded.at",
    )
    .bind(w.tenant)
    .bind(user)
    .bind(w.at)
    .execute(&mut *conn)
    .await
    .map_err(db_error)?;
    sqlx::query("UPDATE sign_ins SET ended_at = $3 WHERE tenant = $1 AND user_id = $2 AND ended_at IS NULL")
        .bind(w.tenant)
        .bind(user)
        .bind(w.at)
        .execute(&mut *conn)
        .await
        .map_err(db_error)?;
    sqlx::query("DELETE FROM sessions WHERE owner = $1").bind(owner_key(w.tenant, user)).execute(&mut *conn).await.map_err(db_error)?;
    // Their sign-ins to connected servers go with the rest, those begun
    // and not yet back among them.
    for sql in ["DELETE FROM server_connections WHERE tenant = $1 AND user_id = $2", "DELETE FROM server_sign_ins WHERE tenant = $1 AND user_id = $2"]
    {
        sqlx::query(sql).bind(w.tenant).bind(user).execute(&mut *conn).await.map_err(db_error)?;
    }
    Ok(())
}

/// Ends every token and session of `user` issued until now ("sign out
/// everywhere"), or, given `session`, that one sign-in session of theirs.
pub(crate) async fn end_sessions(conn: &mut AnyConnection, w: &Writing<'_>, user: &str, session: Option<&str>) -> Result<Event, Error> {
    match session {
        None => end_all(conn, w, user).await?,
        Some(id) => {
            sqlx::query("UPDATE sign_ins SET ended_at = $4 WHERE id = $1 AND tenant = $2 AND user_id = $3 AND ended_at IS NULL")
                .bind(id)
                .bind(w.tenant)
                .bind(user)
                .bind(w.at)
                .execute(&mut *conn)
                .await
                .map_err(db_error)?;
        }
    }
    Ok(SessionsEnded { user: user.to_owned(), at: w.at, session: session.map(str::to_owned) }.into())
}
