//! SCIM 2.0 (RFC 7643, RFC 7644) at `/scim/v2` (R6): a company's
//! provisioning client keeps a tenant's directory, by the tenant's SCIM
//! token. What SCIM says of a resource is `lattice-scim`'s; who a person is
//! and what a change does (a deactivation signs them out everywhere, a
//! group's change changes roles) is the log's. This file carries requests
//! between them and writes SCIM's answers: its media type, its errors, its
//! `ETag` and `Location`.

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use lattice_core::directory::{ProvisionedGroup, ProvisionedPerson};
use lattice_core::{Command, Error, UserId};
use lattice_log::{Authenticated, DIRECTORY_PAGE, GroupRow, PersonRow};
use lattice_scim::list::{ListQuery, list_response};
use lattice_scim::resource::{self, Projection, ResourceMeta};
use lattice_scim::schema::ResourceType;
use lattice_scim::{ScimError, discovery, patch};
use serde_json::{Value, json};

use crate::guard::{Guard, Limits};
use crate::state::AppState;

/// SCIM's routes, mounted at `/scim/v2`: one handler reads the path, so
/// every unknown path and method answers as SCIM does (a SCIM error body).
pub fn router() -> Router<AppState> {
    Router::new().route("/scim/v2", axum::routing::any(serve)).route("/scim/v2/{*rest}", axum::routing::any(serve))
}

/// A SCIM client's writes, per token: a directory's first sync sends
/// thousands at once, so its allowance is its own, above a person's.
fn writes() -> &'static Guard {
    static WRITES: std::sync::OnceLock<Guard> = std::sync::OnceLock::new();
    WRITES.get_or_init(|| Guard::new(Limits { writes_per_sec: 200, write_burst: 2000, ..Limits::default() }))
}

/// An answer: its status, its body (if any) and SCIM's headers.
struct Answer {
    status: StatusCode,
    body: Option<Value>,
    etag: Option<String>,
    location: Option<String>,
}

impl Answer {
    fn json(status: StatusCode, body: Value) -> Self {
        Self { status, body: Some(body), etag: None, location: None }
    }
}

impl IntoResponse for Answer {
    fn into_response(self) -> Response {
        let mut response = match self.body {
            Some(body) => {
                let mut r = (self.status, body.to_string()).into_response();
                r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(lattice_scim::CONTENT_TYPE));
                r
            }
            None => self.status.into_response(),
        };
        for (name, value) in [(header::ETAG, self.etag), (header::LOCATION, self.location)] {
            if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }
}

fn refusal(e: ScimError) -> Response {
    let mut response = Answer::json(StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST), e.to_json()).into_response();
    if e.status == 401 {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"scim\""));
    }
    response
}

/// A refusal of the log's, as SCIM says it.
fn scim_error(e: Error) -> ScimError {
    match e {
        Error::NotFound => ScimError::not_found("no such resource"),
        Error::Unauthorized { reason, .. } => ScimError::unauthorized(reason),
        Error::Forbidden { reason, .. } => ScimError::forbidden(reason),
        Error::Conflict { expected: Some(_), .. } => ScimError::precondition_failed("another change came first"),
        Error::Conflict { reason, .. } => ScimError::uniqueness(reason),
        Error::ValidationFailed { .. } | Error::InvalidState { .. } => ScimError::invalid_value(e.to_string()),
        Error::Malformed { reason, .. } => ScimError::invalid_syntax(reason),
        Error::TooLarge { limit, size, .. } => ScimError::new(413, None, format!("{size} bytes exceed the limit {limit}")),
        Error::RateLimited { retry_after_secs } => ScimError::new(429, None, format!("too many requests: try again in {retry_after_secs} s")),
        other => ScimError::new(503, None, other.to_string()),
    }
}

/// Every request: the SCIM token, then the path.
async fn serve(State(state): State<AppState>, req: Request) -> Response {
    let header = req.headers().get(header::AUTHORIZATION).map(HeaderValue::as_bytes);
    let who = match state.log.authenticate_scim(header).await {
        Ok(who) => who,
        Err(e) => return refusal(scim_error(e)),
    };
    if req.method() != Method::GET
        && let Err(e) = writes().admit_write(who.principal())
    {
        return refusal(scim_error(e));
    }
    let scim = Scim { state: &state, who: &who, base: format!("{}/scim/v2", state.portal_origin.trim_end_matches('/')) };
    match scim.route(req).await {
        Ok(answer) => answer.into_response(),
        Err(e) => refusal(e),
    }
}

struct Scim<'a> {
    state: &'a AppState,
    who: &'a Authenticated,
    base: String,
}

/// A request's parts as SCIM reads them.
struct Asked {
    method: Method,
    segments: Vec<String>,
    query: Vec<(String, String)>,
    headers: HeaderMap,
    body: Option<Value>,
}

impl Asked {
    fn param(&self, name: &str) -> Option<&str> {
        self.query.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn body(&self) -> Result<&Value, ScimError> {
        self.body.as_ref().ok_or_else(|| ScimError::invalid_syntax("the request needs a JSON body"))
    }

    fn if_match(&self) -> Option<&str> {
        self.headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok())
    }

    fn projection(&self, rt: ResourceType) -> Result<Projection, ScimError> {
        Projection::parse(rt, self.param("attributes"), self.param("excludedAttributes"))
    }
}

async fn read(req: Request) -> Result<Asked, ScimError> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().strip_prefix("/scim/v2").unwrap_or_default().to_owned();
    let segments = path.split('/').filter(|s| !s.is_empty()).map(percent_decode).collect::<Result<_, _>>()?;
    let query =
        url::form_urlencoded::parse(parts.uri.query().unwrap_or_default().as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let declared = lattice_http::error::declared_length(&parts.headers);
    let bytes = lattice_http::error::read_within(body, declared, lattice_scim::limits::MAX_REQUEST_BYTES).await.map_err(scim_error)?;
    let body = if bytes.is_empty() {
        None
    } else {
        Some(serde_json::from_slice(&bytes).map_err(|e| ScimError::invalid_syntax(format!("the body is not JSON: {e}")))?)
    };
    Ok(Asked { method: parts.method, segments, query, headers: parts.headers, body })
}

fn percent_decode(segment: &str) -> Result<String, ScimError> {
    url::form_urlencoded::parse(format!("s={}", segment.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| ScimError::invalid_syntax("a path segment does not read"))
}

impl Scim<'_> {
    async fn route(&self, req: Request) -> Result<Answer, ScimError> {
        let asked = read(req).await?;
        let segments: Vec<&str> = asked.segments.iter().map(String::as_str).collect();
        let ok = |body: Value| Ok(Answer::json(StatusCode::OK, body));
        match (&asked.method, segments.as_slice()) {
            (&Method::GET, ["ServiceProviderConfig"]) => ok(discovery::service_provider_config(&self.base)),
            (&Method::GET, ["ResourceTypes"]) => ok(discovery::resource_types(&self.base)),
            (&Method::GET, ["ResourceTypes", id]) => {
                discovery::resource_type(&self.base, id).map_or_else(|| Err(ScimError::not_found(format!("no resource type {id}"))), ok)
            }
            (&Method::GET, ["Schemas"]) => ok(discovery::schemas(&self.base)),
            (&Method::GET, ["Schemas", id]) => {
                discovery::schema(&self.base, id).map_or_else(|| Err(ScimError::not_found(format!("no schema {id}"))), ok)
            }
            (m, ["ServiceProviderConfig" | "ResourceTypes" | "Schemas", ..]) => Err(ScimError::method_not_allowed(m.as_str())),
            (_, ["Bulk"]) => Err(ScimError::not_implemented("lattice takes no bulk requests (ServiceProviderConfig says so)")),
            (_, ["Me", ..]) => Err(ScimError::not_implemented("/Me is not served: a SCIM token is the directory's, no person's")),
            (&Method::POST, [".search"]) => self.search_everything(asked.body()?).await,
            (_, [endpoint, rest @ ..]) => {
                let rt = match *endpoint {
                    "Users" => ResourceType::User,
                    "Groups" => ResourceType::Group,
                    _ => return Err(ScimError::not_found(format!("no endpoint /{endpoint}"))),
                };
                self.resource(rt, rest, &asked).await
            }
            _ => Err(ScimError::not_found("no endpoint here")),
        }
    }

    async fn resource(&self, rt: ResourceType, rest: &[&str], asked: &Asked) -> Result<Answer, ScimError> {
        match (&asked.method, rest) {
            (&Method::GET, []) => {
                let pairs = asked.query.iter().map(|(k, v)| (k.as_str(), v.as_str()));
                let query = ListQuery::from_query(rt, pairs)?;
                Ok(Answer::json(StatusCode::OK, self.list(rt, &query).await?))
            }
            (&Method::POST, [".search"]) => {
                let query = ListQuery::from_search_request(rt, asked.body()?)?;
                Ok(Answer::json(StatusCode::OK, self.list(rt, &query).await?))
            }
            (&Method::POST, []) => match rt {
                ResourceType::User => self.create_user(asked).await,
                ResourceType::Group => self.create_group(asked).await,
            },
            (method, [id]) => {
                let current = self.current(rt, id).await?;
                let version = resource::version_of(&current.document);
                match *method {
                    Method::GET => {
                        let if_none = asked.headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
                        if if_none.is_some_and(|h| resource::etag_matches(h, &version)) {
                            return Ok(Answer { status: StatusCode::NOT_MODIFIED, body: None, etag: Some(version), location: None });
                        }
                        Ok(self.answer(rt, &current, StatusCode::OK, &asked.projection(rt)?))
                    }
                    Method::DELETE => {
                        resource::check_if_match(asked.if_match(), &version)?;
                        self.delete(rt, &current).await?;
                        Ok(Answer { status: StatusCode::NO_CONTENT, body: None, etag: None, location: None })
                    }
                    Method::PUT => {
                        resource::check_if_match(asked.if_match(), &version)?;
                        let replaced = resource::normalize_replace(rt, asked.body()?, &current.stored)?;
                        self.save(rt, &current, replaced.document, asked).await
                    }
                    Method::PATCH => {
                        resource::check_if_match(asked.if_match(), &version)?;
                        let patched = patch::apply_body(rt, &current.stored, asked.body()?)?;
                        if !patched.changed {
                            return Ok(self.answer(rt, &current, StatusCode::OK, &asked.projection(rt)?));
                        }
                        self.save(rt, &current, patched.document, asked).await
                    }
                    ref m => Err(ScimError::method_not_allowed(m.as_str())),
                }
            }
            (m, []) => Err(ScimError::method_not_allowed(m.as_str())),
            _ => Err(ScimError::not_found("no such endpoint")),
        }
    }

    /// A resource rendered as an answer, with its `ETag` and `Location`.
    fn answer(&self, rt: ResourceType, current: &Current, status: StatusCode, projection: &Projection) -> Answer {
        let meta = ResourceMeta { id: &current.id, created_ms: current.created, last_modified_ms: current.modified, base_url: &self.base };
        let body = resource::render(rt, &current.document, &meta, projection);
        Answer {
            status,
            body: Some(body),
            etag: Some(resource::version_of(&current.document)),
            location: Some(resource::location(rt, &self.base, &current.id)),
        }
    }

    /// The resource as stored now; `NotFound` as SCIM says it.
    async fn current(&self, rt: ResourceType, id: &str) -> Result<Current, ScimError> {
        match rt {
            ResourceType::User => {
                let row = self.state.log.directory_person(self.who, id).await.map_err(scim_error)?;
                self.user(row).await
            }
            ResourceType::Group => Ok(self.group(self.state.log.directory_group(self.who, id).await.map_err(scim_error)?)),
        }
    }

    async fn user(&self, row: PersonRow) -> Result<Current, ScimError> {
        let groups = self.state.log.directory_groups_of(self.who, &row.user).await.map_err(scim_error)?;
        Ok(self.user_in(row, &groups))
    }

    /// A person with the groups they are in written in (`(id, name)`).
    fn user_in(&self, row: PersonRow, groups: &[(String, String)]) -> Current {
        let stored = row.document.clone().unwrap_or_else(|| signed_in_document(&row));
        let document = resource::with_groups(&stored, &self.base, groups.iter().map(|(id, name)| (id.as_str(), name.as_str())));
        Current { id: row.user, stored, document, created: row.created_at, modified: row.updated_at, version: row.version, members: Vec::new() }
    }

    fn group(&self, row: GroupRow) -> Current {
        Current {
            id: row.id,
            stored: row.document.clone(),
            document: row.document,
            created: row.created_at,
            modified: row.updated_at,
            version: row.version,
            members: row.members,
        }
    }

    async fn create_user(&self, asked: &Asked) -> Result<Answer, ScimError> {
        let created = resource::normalize_create(ResourceType::User, asked.body()?)?;
        let person = provisioned_person(&created.document)?;
        if self.state.log.directory_person_named(self.who, &person.user_name).await.map_err(scim_error)?.is_some() {
            return Err(ScimError::uniqueness(format!("another person of the tenant has the userName {:?}", person.user_name)));
        }
        let mut user = id_for(&person.user_name);
        // The name's id held by someone renamed since: a new one.
        if self.state.log.directory_person(self.who, user.as_str()).await.is_ok() {
            user = UserId::from_trusted(format!("u-{}", ulid::Ulid::generate().to_string().to_lowercase()));
        }
        let command = Command::ProvisionPerson { user: user.clone(), person, create: true, expected_version: None };
        self.state.log.execute(self.who, command).await.map_err(scim_error)?;
        let row = self.state.log.directory_person(self.who, user.as_str()).await.map_err(scim_error)?;
        let current = self.user(row).await?;
        Ok(self.answer(ResourceType::User, &current, StatusCode::CREATED, &asked.projection(ResourceType::User)?))
    }

    async fn create_group(&self, asked: &Asked) -> Result<Answer, ScimError> {
        let created = resource::normalize_create(ResourceType::Group, asked.body()?)?;
        let group = provisioned_group(created.document)?;
        let id = format!("g-{}", ulid::Ulid::generate().to_string().to_lowercase());
        let members = group.members.clone();
        let command = Command::ProvisionGroup { id: id.clone(), group, create: true, expected_version: None };
        self.state.log.execute(self.who, command).await.map_err(scim_error)?;
        self.follow_rules(&members).await?;
        let current = self.group(self.state.log.directory_group(self.who, &id).await.map_err(scim_error)?);
        Ok(self.answer(ResourceType::Group, &current, StatusCode::CREATED, &asked.projection(ResourceType::Group)?))
    }

    /// Saves a changed document in place of `current` (a PUT or a PATCH),
    /// as of the version it was read at.
    async fn save(&self, rt: ResourceType, current: &Current, document: Value, asked: &Asked) -> Result<Answer, ScimError> {
        let expected_version = Some(current.version);
        match rt {
            ResourceType::User => {
                let person = provisioned_person(&document)?;
                let user = UserId::parse("id", &current.id).map_err(|_| ScimError::not_found("no such resource"))?;
                let command = Command::ProvisionPerson { user: user.clone(), person, create: false, expected_version };
                self.state.log.execute(self.who, command).await.map_err(scim_error)?;
                self.follow_rules(std::slice::from_ref(&user)).await?;
            }
            ResourceType::Group => {
                let group = provisioned_group(document)?;
                let touched: Vec<UserId> = {
                    let mut all: Vec<UserId> = current.members.iter().map(|m| UserId::from_trusted(m.clone())).collect();
                    all.extend(group.members.iter().cloned());
                    all.sort();
                    all.dedup();
                    all
                };
                let command = Command::ProvisionGroup { id: current.id.clone(), group, create: false, expected_version };
                self.state.log.execute(self.who, command).await.map_err(scim_error)?;
                self.follow_rules(&touched).await?;
            }
        }
        let saved = self.current(rt, &current.id).await?;
        Ok(self.answer(rt, &saved, StatusCode::OK, &asked.projection(rt)?))
    }

    async fn delete(&self, rt: ResourceType, current: &Current) -> Result<(), ScimError> {
        match rt {
            ResourceType::User => {
                let user = UserId::parse("id", &current.id).map_err(|_| ScimError::not_found("no such resource"))?;
                self.state.log.execute(self.who, Command::RemovePerson { user }).await.map_err(scim_error)?;
            }
            ResourceType::Group => {
                self.state.log.execute(self.who, Command::RemoveGroup { id: current.id.clone() }).await.map_err(scim_error)?;
                let members: Vec<UserId> = current.members.iter().map(|m| UserId::from_trusted(m.clone())).collect();
                self.follow_rules(&members).await?;
            }
        }
        Ok(())
    }

    /// The workspaces the group rules give `people` follow their groups.
    async fn follow_rules(&self, people: &[UserId]) -> Result<(), ScimError> {
        self.state.log.apply_group_rules(&self.who.principal().tenant, people).await.map_err(scim_error)
    }

    /// Every resource of `rt`, rendered in full, then the query's filter,
    /// sort, page and projection. A filter that narrows to one `eq` on an
    /// indexed attribute reads that alone.
    async fn list(&self, rt: ResourceType, query: &ListQuery) -> Result<Value, ScimError> {
        let narrowed = query.filter.as_ref().and_then(|f| f.narrowing_eq());
        let mut rendered = Vec::new();
        let render = |current: &Current| {
            let meta = ResourceMeta { id: &current.id, created_ms: current.created, last_modified_ms: current.modified, base_url: &self.base };
            resource::render(rt, &current.document, &meta, &Projection::default())
        };
        match (rt, narrowed.as_ref().map(|eq| (eq.attribute, eq.value))) {
            (ResourceType::User, Some(("userName", name))) => {
                if let Some(row) = self.state.log.directory_person_named(self.who, name).await.map_err(scim_error)? {
                    rendered.push(render(&self.user(row).await?));
                }
            }
            (_, Some(("id", id))) => match self.current(rt, id).await {
                Ok(current) => rendered.push(render(&current)),
                Err(e) if e.status == 404 => {}
                Err(e) => return Err(e),
            },
            // No filter, no sort: the page alone, from the database.
            (ResourceType::User, _) if query.filter.is_none() && query.sort.is_none() => {
                let offset = i64::try_from(query.start_index.saturating_sub(1)).unwrap_or(i64::MAX);
                let (page, total) = self.state.log.directory_people_at(self.who, offset, query.count.max(1) as i64).await.map_err(scim_error)?;
                let groups = self.memberships().await?;
                let resources: Vec<Value> = page
                    .into_iter()
                    .take(query.count)
                    .map(|row| {
                        let of = groups.get(&row.user).cloned().unwrap_or_default();
                        query.projection.project(rt, render(&self.user_in(row, &of)))
                    })
                    .collect();
                return Ok(list_response(usize::try_from(total).unwrap_or(0), query.start_index, resources));
            }
            (ResourceType::User, _) => {
                let groups = self.memberships().await?;
                let mut after = String::new();
                loop {
                    let page = self.state.log.directory_people(self.who, &after, DIRECTORY_PAGE).await.map_err(scim_error)?;
                    let Some(last) = page.last() else { break };
                    after = last.user.clone();
                    let full = page.len() as i64 == DIRECTORY_PAGE;
                    for row in page {
                        let of = groups.get(&row.user).cloned().unwrap_or_default();
                        rendered.push(render(&self.user_in(row, &of)));
                    }
                    if !full {
                        break;
                    }
                }
            }
            (ResourceType::Group, _) => {
                let mut after = String::new();
                loop {
                    let page = self.state.log.directory_groups(self.who, &after, DIRECTORY_PAGE).await.map_err(scim_error)?;
                    let Some(last) = page.last() else { break };
                    after = last.id.clone();
                    let full = page.len() as i64 == DIRECTORY_PAGE;
                    for row in page {
                        rendered.push(render(&self.group(row)));
                    }
                    if !full {
                        break;
                    }
                }
            }
        }
        Ok(query.respond(rt, rendered))
    }

    /// The groups each person is in, read once for a list.
    async fn memberships(&self) -> Result<std::collections::HashMap<String, Vec<(String, String)>>, ScimError> {
        let mut by_person: std::collections::HashMap<String, Vec<(String, String)>> = std::collections::HashMap::new();
        for (user, id, name) in self.state.log.directory_memberships(self.who).await.map_err(scim_error)? {
            by_person.entry(user).or_default().push((id, name));
        }
        Ok(by_person)
    }

    /// `POST /.search` at the root: each resource type searched, one list.
    async fn search_everything(&self, body: &Value) -> Result<Answer, ScimError> {
        let (mut total, mut found) = (0usize, Vec::new());
        let mut start = 1;
        for rt in ResourceType::ALL {
            let query = ListQuery::from_search_request(rt, body)?;
            start = query.start_index;
            let listed = self.list(rt, &query).await?;
            total += listed["totalResults"].as_u64().unwrap_or_default() as usize;
            found.extend(listed["Resources"].as_array().cloned().unwrap_or_default());
        }
        Ok(Answer::json(StatusCode::OK, list_response(total, start, found)))
    }
}

/// A resource as stored now: `stored` what a change starts from,
/// `document` what a reader is shown (a user's groups written in).
struct Current {
    id: String,
    stored: Value,
    document: Value,
    created: i64,
    modified: i64,
    version: u64,
    members: Vec<String>,
}

/// What the log keeps of a person, from their SCIM document.
fn provisioned_person(document: &Value) -> Result<ProvisionedPerson, ScimError> {
    let user_name = document.get("userName").and_then(Value::as_str).ok_or_else(|| ScimError::invalid_value("userName is required"))?;
    let emails = document.get("emails").and_then(Value::as_array);
    let primary = emails.and_then(|e| e.iter().find(|m| m.get("primary") == Some(&Value::Bool(true))).or_else(|| e.first()));
    Ok(ProvisionedPerson {
        user_name: user_name.to_owned(),
        display_name: document.get("displayName").and_then(Value::as_str).map(str::to_owned),
        email: primary.and_then(|m| m.get("value")).and_then(Value::as_str).map(str::to_owned),
        external_id: document.get("externalId").and_then(Value::as_str).map(str::to_owned),
        active: resource::is_active(document),
        document: document.clone(),
    })
}

/// What the log keeps of a group, from its SCIM document: its members are
/// people of the tenant's directory, by their ids.
fn provisioned_group(document: Value) -> Result<ProvisionedGroup, ScimError> {
    let display_name =
        document.get("displayName").and_then(Value::as_str).ok_or_else(|| ScimError::invalid_value("displayName is required"))?.to_owned();
    let members = resource::member_ids(&document)
        .map(|id| UserId::parse("members", id).map_err(|_| ScimError::invalid_value(format!("member {id:?} is no person of the tenant's directory"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ProvisionedGroup { display_name, external_id: document.get("externalId").and_then(Value::as_str).map(str::to_owned), members, document })
}

/// The id a person provisioned as `user_name` gets: the name itself
/// (lowercase) when it makes an id, so a sign-in by that name finds them;
/// else a new one.
fn id_for(user_name: &str) -> UserId {
    lattice_log::derived_user_id(user_name)
        .unwrap_or_else(|| UserId::from_trusted(format!("u-{}", ulid::Ulid::generate().to_string().to_lowercase())))
}

/// A person who signed in but was never provisioned, as SCIM shows them.
fn signed_in_document(row: &PersonRow) -> Value {
    let mut document = json!({"userName": row.user_name, "active": row.active});
    if let Some(name) = &row.display_name {
        document["displayName"] = json!(name);
    }
    if let Some(email) = &row.email {
        document["emails"] = json!([{"value": email, "primary": true}]);
    }
    document
}
