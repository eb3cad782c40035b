//! The edge's kept-alive HTTP/1.1 connections to one upstream replica.
//!
//! A connection is driven by the request that holds it, and then by its
//! answer's body while that streams, instead of by a task of its own: a
//! forwarded request is written, answered and relayed in the task that
//! serves it, with no hand-over to another task and back for the request,
//! the answer and each piece of its body (what a pooled client with a task
//! per connection spends; `cargo xtask bench edge`). A connection goes
//! back to the idle ones only once its answer was read to the end; one
//! closed while idle is found and dropped when next taken.
//!
//! The connection hands the answer and its body to the task that drives
//! it, and would wake that task to say so, while it runs: the task would
//! then be polled once more for nothing, twice a request. So the
//! connection is first driven without the task's waker and asked only
//! for what it then handed over; the waker is left with it just when
//! the task has to wait for the socket (`drive`).

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{Request, Response};
use http_body_util::Full;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

type Sender = http1::SendRequest<Full<Bytes>>;
type Driver = http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// Idle connections kept per replica; more are closed once answered.
const MAX_IDLE: usize = 256;
/// How long an idle connection may take to be ready for a request before
/// it is dropped (a healthy one is ready at once).
const READY_WITHIN: Duration = Duration::from_secs(1);

struct Conn {
    send: Sender,
    driver: Driver,
}

type Idle = Arc<Mutex<Vec<Conn>>>;

/// The connections to one replica (`host:port`).
pub(crate) struct Connections {
    authority: String,
    idle: Idle,
}

/// Why a request got no answer.
pub(crate) enum Failed {
    /// No connection could be made: the replica never had the request.
    Connect(std::io::Error),
    /// The connection failed once the request was on it.
    Answer(hyper::Error),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Connect(e) => write!(f, "connecting: {e}"),
            Failed::Answer(e) => write!(f, "{e}"),
        }
    }
}

impl Connections {
    /// `authority`: the replica's `host:port`.
    pub(crate) fn new(authority: String) -> Self {
        Self { authority, idle: Arc::default() }
    }

    /// Sends `request` (its URI in origin form, its `Host` set) on an idle
    /// connection, or a new one; a request that an idle connection closed
    /// before taking goes on the next.
    pub(crate) async fn send(&self, mut request: Request<Full<Bytes>>) -> Result<Response<Relayed>, Failed> {
        loop {
            let (conn, reused) = match self.take_ready().await {
                Some(conn) => (conn, true),
                None => (self.connect().await?, false),
            };
            let Conn { mut send, driver } = conn;
            let mut driver = Some(driver);
            let mut answer = std::pin::pin!(send.try_send_request(request));
            // The answer's head, the connection driven meanwhile; once the
            // connection ended, dropping it settles the answer (an error,
            // with the request when it was never written).
            let head = poll_fn(|cx| {
                drive(
                    cx,
                    |cx| {
                        if let Some(d) = &mut driver
                            && Pin::new(d).poll(cx).is_ready()
                        {
                            driver = None;
                        }
                        driver.is_some()
                    },
                    |cx| answer.as_mut().poll(cx),
                )
            })
            .await;
            match head {
                Ok(answer) => {
                    let (parts, body) = answer.into_parts();
                    let conn = driver.map(|driver| Conn { send, driver });
                    return Ok(Response::from_parts(parts, Relayed { body, conn, idle: self.idle.clone(), ended: false }));
                }
                Err(mut e) => match e.take_message() {
                    Some(unsent) if reused => request = unsent,
                    _ => return Err(Failed::Answer(e.into_error())),
                },
            }
        }
    }

    /// An idle connection ready for a request, dropping those that closed.
    async fn take_ready(&self) -> Option<Conn> {
        loop {
            let mut conn = self.idle.lock().unwrap_or_else(PoisonError::into_inner).pop()?;
            // Without this task's waker, which the request sent next would
            // wake (`drive`).
            let now = poll_ready(&mut conn, &mut Context::from_waker(Waker::noop()));
            let ready = match now {
                Poll::Ready(ready) => ready,
                Poll::Pending => tokio::time::timeout(READY_WITHIN, poll_fn(|cx| poll_ready(&mut conn, cx))).await.unwrap_or(false),
            };
            if ready {
                return Some(conn);
            }
        }
    }

    /// A connection of its own for one request whose body streams (an
    /// upload, too large to hold and so sent once, to one replica); the
    /// connection is driven by a task beside it and closed after it. A
    /// replica that refuses the connection never had the body.
    pub(crate) async fn open_streamed(&self) -> Result<http1::SendRequest<axum::body::Body>, Failed> {
        let stream = TcpStream::connect(&self.authority).await.map_err(Failed::Connect)?;
        let _ = stream.set_nodelay(true);
        let (send, driver) = http1::Builder::new().handshake(TokioIo::new(stream)).await.map_err(|e| Failed::Connect(std::io::Error::other(e)))?;
        tokio::spawn(async move {
            if let Err(e) = driver.await {
                tracing::debug!(error = %e, "an upload's connection ended");
            }
        });
        Ok(send)
    }

    async fn connect(&self) -> Result<Conn, Failed> {
        let stream = TcpStream::connect(&self.authority).await.map_err(Failed::Connect)?;
        let _ = stream.set_nodelay(true);
        let (send, driver) = http1::Builder::new().handshake(TokioIo::new(stream)).await.map_err(|e| Failed::Connect(std::io::Error::other(e)))?;
        Ok(Conn { send, driver })
    }
}

/// Drives a connection (`connection`, false once it ended) until what
/// it hands over (`settled`) is ready, or until it waits for the socket:
/// first with no waker, so that handing it over wakes no one, then with
/// the task's, for the socket. What is handed over is only ever handed
/// over within `connection`, and asked for right after it; with the
/// connection ended, nothing else will hand it over and it is waited on.
fn drive<T>(
    cx: &mut Context<'_>,
    mut connection: impl FnMut(&mut Context<'_>) -> bool,
    mut settled: impl FnMut(&mut Context<'_>) -> Poll<T>,
) -> Poll<T> {
    for waker in [Waker::noop(), cx.waker()] {
        let open = connection(&mut Context::from_waker(waker));
        if let Poll::Ready(t) = settled(&mut Context::from_waker(Waker::noop())) {
            return Poll::Ready(t);
        }
        if !open {
            return settled(cx);
        }
    }
    Poll::Pending
}

/// Whether an idle connection can take a request: `false` once it ended.
fn poll_ready(conn: &mut Conn, cx: &mut Context<'_>) -> Poll<bool> {
    if Pin::new(&mut conn.driver).poll(cx).is_ready() {
        return Poll::Ready(false);
    }
    conn.send.poll_ready(cx).map(|r| r.is_ok())
}

/// An answer's body, relayed as it arrives; it drives its connection, and
/// hands it back to the idle ones when read to the end.
pub(crate) struct Relayed {
    body: Incoming,
    conn: Option<Conn>,
    idle: Idle,
    ended: bool,
}

impl Body for Relayed {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        // The connection reads the body into `body`; ended, `body` has
        // its end or its error.
        let (conn, body) = (&mut this.conn, &mut this.body);
        let frame = drive(
            cx,
            |cx| {
                if let Some(c) = conn
                    && Pin::new(&mut c.driver).poll(cx).is_ready()
                {
                    *conn = None;
                }
                conn.is_some()
            },
            |cx| Pin::new(&mut *body).poll_frame(cx),
        );
        if let Poll::Ready(None) = frame {
            this.ended = true;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.ended || self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Relayed {
    fn drop(&mut self) {
        // A body left unread leaves the connection mid-answer: it closes.
        if let Some(conn) = self.conn.take()
            && self.is_end_stream()
        {
            let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
            if idle.len() < MAX_IDLE {
                idle.push(conn);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Bytes;
    use axum::http::Request;
    use http_body_util::{BodyExt, Full};

    use super::Connections;

    /// A replica that answers with the path it was asked for, counting
    /// the connections it takes; `close` answers each on a connection it
    /// then closes.
    async fn replica(close: bool) -> (String, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let authority = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        let listener = axum::serve::ListenerExt::tap_io(listener, move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let app = axum::Router::new().fallback(move |uri: axum::http::Uri| async move {
            let connection = if close { "close" } else { "keep-alive" };
            ([(axum::http::header::CONNECTION, connection)], uri.path().to_owned())
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        (authority, accepted)
    }

    fn get(authority: &str, path: &str) -> Request<Full<Bytes>> {
        Request::get(path).header("host", authority).body(Full::new(Bytes::new())).unwrap()
    }

    async fn text(connections: &Connections, authority: &str, path: &str) -> String {
        let answer = connections.send(get(authority, path)).await.unwrap_or_else(|e| panic!("{path}: {e}"));
        String::from_utf8(answer.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
    }

    #[tokio::test]
    async fn an_answered_connection_is_used_again_and_an_unread_one_is_not() {
        let (authority, accepted) = replica(false).await;
        let connections = Connections::new(authority.clone());
        for i in 0..5 {
            assert_eq!(text(&connections, &authority, &format!("/v1/{i}")).await, format!("/v1/{i}"));
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 1, "five answers read to the end share one connection");
        // An answer whose body nobody reads leaves its connection mid-answer.
        drop(connections.send(get(&authority, "/v1/unread")).await.unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(text(&connections, &authority, "/v1/after").await, "/v1/after");
        assert_eq!(accepted.load(Ordering::Relaxed), 2);
    }

    /// `fut`'s output, and how many times it was polled to get it.
    async fn polled<F: std::future::Future>(fut: F) -> (F::Output, usize) {
        let mut fut = std::pin::pin!(fut);
        let mut polls = 0;
        let out = std::future::poll_fn(|cx| {
            polls += 1;
            fut.as_mut().poll(cx)
        })
        .await;
        (out, polls)
    }

    /// On a kept connection the task that forwards a request is polled
    /// twice until the answer's head (to write the request, then when
    /// the answer came) and once for its body: the connection handing
    /// them over does not wake the task again.
    #[tokio::test]
    async fn a_forwarded_request_does_not_wake_its_own_task() {
        let (authority, accepted) = replica(false).await;
        let connections = Connections::new(authority.clone());
        assert_eq!(text(&connections, &authority, "/v1/first").await, "/v1/first");
        for i in 0..20 {
            let (answer, polls) = polled(connections.send(get(&authority, &format!("/v1/{i}")))).await;
            let answer = answer.unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(polls, 2, "request {i}: polls until the answer's head");
            let (body, polls) = polled(answer.into_body().collect()).await;
            assert_eq!(body.unwrap().to_bytes(), format!("/v1/{i}").as_bytes(), "request {i}");
            assert_eq!(polls, 1, "request {i}: polls until the body's end");
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 1);
    }

    #[tokio::test]
    async fn a_connection_the_replica_closed_is_passed_over_for_a_new_one() {
        let (authority, accepted) = replica(true).await;
        let connections = Connections::new(authority.clone());
        for i in 0..3 {
            assert_eq!(text(&connections, &authority, &format!("/v1/{i}")).await, format!("/v1/{i}"));
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        assert_eq!(accepted.load(Ordering::Relaxed), 3);
    }

    #[tokio::test]
    async fn a_replica_that_is_not_there_fails_to_connect() {
        let authority = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
        let connections = Connections::new(authority.clone());
        match connections.send(get(&authority, "/v1/x")).await {
            Err(super::Failed::Connect(_)) => {}
            Err(other) => panic!("not a connect failure: {other}"),
            Ok(_) => panic!("an answer from nowhere"),
        }
    }
}
