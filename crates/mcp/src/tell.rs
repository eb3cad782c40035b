//! Where a change a client follows is told: its session, for a client
//! before MCP 2026-07-28 (`resources/subscribe`, the session's stream), or
//! one `subscriptions/listen` request's stream, which 2026-07-28 has in
//! place of sessions. The followers (`subscriptions`, `listing::watch`)
//! are the same for both.

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{Peer, RoleServer, SubscriptionSink};

#[derive(Clone)]
pub(crate) enum Tell {
    Session(Peer<RoleServer>),
    /// The listen request's sink, and the peer its stream goes to.
    Listen(SubscriptionSink, Peer<RoleServer>),
}

impl Tell {
    /// Whether nobody hears any more: the session or the stream is gone.
    pub(crate) fn gone(&self) -> bool {
        match self {
            Self::Session(peer) | Self::Listen(_, peer) => peer.is_transport_closed(),
        }
    }

    /// Tells that `uri` changed; false once nobody hears.
    pub(crate) async fn updated(&self, uri: &str) -> bool {
        match self {
            Self::Session(peer) => peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.to_owned())).await.is_ok(),
            Self::Listen(sink, _) => sink.notify_resource_updated(uri.to_owned()).await.is_ok(),
        }
    }

    /// Tells that the toolset changed; false once nobody hears.
    pub(crate) async fn tools_changed(&self) -> bool {
        match self {
            Self::Session(peer) => peer.notify_tool_list_changed().await.is_ok(),
            Self::Listen(sink, _) => sink.notify_tool_list_changed().await.is_ok(),
        }
    }
}
