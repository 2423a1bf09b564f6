//! `notifications/progress`, handed to the call that asked for them in the order the server
//! sent them, and all of them before the call's result.
//!
//! rmcp hands each notification to the client's handler on a task of its own, so two progress
//! notifications sent back to back can reach a handler in either order, and the last one sent
//! before the result can arrive after the caller has the result. [`InOrder`] instead reads
//! progress off the connection itself, as each message is received (one at a time, in the
//! server's order), and passes it at once to the subscribed call's channel; a result, read
//! after them, is only then passed on to rmcp, so when a call has its result every progress
//! notification sent before it is already in its channel.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ProgressNotificationParam, ProgressToken, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use crate::Progress;
use crate::traffic::{Direction, Traffic};

/// Progress notifications kept for tokens no call has subscribed to yet (a server may answer
/// before the caller subscribes); the oldest go first.
const UNCLAIMED_KEPT: usize = 64;

/// Where each progress token's notifications go: one connection's calls, by token.
#[derive(Clone, Default)]
pub struct ProgressRoutes(Arc<Mutex<Routes>>);

#[derive(Default)]
struct Routes {
    subscribed: HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>,
    unclaimed: VecDeque<ProgressNotificationParam>,
}

impl ProgressRoutes {
    /// Sends `token`'s notifications to `to` until the returned guard is dropped; any that
    /// arrived before this call go first.
    pub fn subscribe(&self, token: ProgressToken, to: mpsc::UnboundedSender<Progress>) -> Subscription {
        let mut routes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (early, others): (VecDeque<_>, VecDeque<_>) =
            routes.unclaimed.drain(..).partition(|p| p.progress_token == token);
        routes.unclaimed = others;
        for p in early {
            // A caller that stopped reading progress still gets its result.
            to.send(progress_of(p)).ok();
        }
        routes.subscribed.insert(token.clone(), to);
        Subscription {
            routes: self.clone(),
            token,
        }
    }

    /// Passes one notification to its call, or keeps it a while for a call yet to subscribe.
    fn route(&self, params: ProgressNotificationParam) {
        let mut routes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match routes.subscribed.get(&params.progress_token) {
            Some(to) => {
                to.send(progress_of(params)).ok();
            }
            None => {
                if routes.unclaimed.len() == UNCLAIMED_KEPT {
                    routes.unclaimed.pop_front();
                }
                routes.unclaimed.push_back(params);
            }
        }
    }
}

fn progress_of(p: ProgressNotificationParam) -> Progress {
    Progress {
        progress: p.progress,
        total: p.total,
        message: p.message,
    }
}

/// A call's subscription to its progress; dropping it closes the call's channel (once the
/// caller's own sender is gone too).
pub struct Subscription {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut routes = self.routes.0.lock().unwrap_or_else(PoisonError::into_inner);
        routes.subscribed.remove(&self.token);
    }
}

/// A client transport that routes progress notifications as they are received (see the
/// module's documentation); every message still goes on to rmcp unchanged.
pub struct InOrder<T> {
    inner: T,
    routes: ProgressRoutes,
    /// Where every message in and out is filed, when it is (see [`crate::traffic`]).
    traffic: Option<Traffic>,
}

impl<T> InOrder<T> {
    pub fn new(inner: T, routes: ProgressRoutes, traffic: Option<Traffic>) -> InOrder<T> {
        InOrder { inner, routes, traffic }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for InOrder<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(traffic) = &self.traffic {
            traffic.record(Direction::Out, &item);
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let Some(traffic) = &self.traffic {
            traffic.record(Direction::In, &message);
        }
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(n),
            ..
        }) = &message
        {
            self.routes.route(n.params.clone());
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(token: u32, progress: f64) -> ProgressNotificationParam {
        ProgressNotificationParam::new(
            ProgressToken(rmcp::model::NumberOrString::Number(token.into())),
            progress,
        )
    }

    fn token(n: u32) -> ProgressToken {
        param(n, 0.0).progress_token
    }

    #[test]
    fn a_call_gets_its_own_progress_in_order_including_what_came_before_it_subscribed() {
        let routes = ProgressRoutes::default();
        routes.route(param(1, 1.0));
        routes.route(param(2, 9.0));
        let (tx, mut rx) = mpsc::unbounded_channel();
        let subscription = routes.subscribe(token(1), tx);
        for step in 2..=100 {
            routes.route(param(1, f64::from(step)));
        }
        drop(subscription);
        routes.route(param(1, 101.0));
        let mut seen = Vec::new();
        let end = loop {
            match rx.try_recv() {
                Ok(p) => seen.push(p.progress),
                Err(e) => break e,
            }
        };
        assert_eq!(seen, (1..=100).map(f64::from).collect::<Vec<_>>());
        assert_eq!(
            end,
            mpsc::error::TryRecvError::Disconnected,
            "the channel closes with the subscription"
        );
    }

    #[test]
    fn unclaimed_progress_is_bounded() {
        let routes = ProgressRoutes::default();
        for n in 0..1000 {
            routes.route(param(n, 1.0));
        }
        assert_eq!(routes.0.lock().unwrap().unclaimed.len(), UNCLAIMED_KEPT);
    }
}
