//! A resolver that performs its call for real and alters what the real
//! service answers, as `bypass` does for HTTP.

use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::{Stream, StreamExt};
use http_body::Body as _;

use super::frame::Framer;
use super::{Code, ResolverArgs, Status};
use crate::message::body::Body;

impl<M> ResolverArgs<M> {
    /// Performs this call for real — against the service the client
    /// addressed, skipping every handler — and returns the real service's
    /// one reply, or the status it ended the call with, for the resolver
    /// to return as it is or altered (MSW: `bypass`). For unary and
    /// client-streaming methods; the client's messages are sent as they
    /// arrived. Needs what [`bypass`](crate::bypass) needs: a listening
    /// server with the `net` feature.
    ///
    /// ```
    /// use mocklib::grpc::{self, ResolverArgs};
    /// # #[derive(Clone, PartialEq, prost::Message)]
    /// # struct HelloRequest { #[prost(string, tag = "1")] name: String }
    /// # #[derive(Clone, PartialEq, prost::Message)]
    /// # struct HelloReply { #[prost(string, tag = "1")] message: String }
    ///
    /// grpc::unary("helloworld.Greeter/SayHello", |args: ResolverArgs<HelloRequest>| async move {
    ///     let mut reply: HelloReply = args.real_reply().await?;
    ///     reply.message.push_str(" (seen by mocklib)");
    ///     Ok(reply)
    /// });
    /// ```
    pub async fn real_reply<R>(&self) -> Result<R, Status>
    where
        R: prost::Message + Default,
    {
        let mut replies = self.real_replies::<R>().await?;
        let reply = replies.next().await.unwrap_or_else(|| {
            Err(Status::new(
                Code::Unimplemented,
                "the real service ended the call with no reply",
            ))
        })?;
        match replies.next().await {
            None => Ok(reply),
            Some(Err(status)) => Err(status),
            Some(Ok(_)) => Err(Status::new(
                Code::Unimplemented,
                "the real service sent more than one reply to a call that takes one",
            )),
        }
    }

    /// Performs this call for real, like [`real_reply`](Self::real_reply),
    /// and returns the real service's replies as they come, ending with the
    /// status it ended the call with (an `Err` unless `OK`): a stream a
    /// server-streaming or bidirectional resolver returns as it is or
    /// altered. A bidirectional client's messages reach the real service
    /// as the client sends them, so replies and messages still alternate.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use mocklib::grpc::{self, ResolverArgs, Messages};
    /// # #[derive(Clone, PartialEq, prost::Message)]
    /// # struct Note { #[prost(string, tag = "1")] text: String }
    ///
    /// grpc::bidi_streaming("chat.Chat/Talk", |args: ResolverArgs<Messages<Note>>| async move {
    ///     let replies = args.real_replies::<Note>().await?;
    ///     Ok(replies.map(|note| note.map(|note| Note { text: note.text.to_uppercase() })))
    /// });
    /// ```
    pub async fn real_replies<R>(&self) -> Result<RealReplies<R>, Status>
    where
        R: prost::Message + Default,
    {
        let unavailable = |why: String| Status::new(Code::Unavailable, why);
        let response = crate::message::bypass::bypass_streaming(&self.request)
            .await
            .map_err(|error| unavailable(error.to_string()))?
            .into_http()
            .map_err(unavailable)?;
        let (parts, body) = response.into_parts();
        // A trailers-only answer: the status is all there is.
        if let Some(status) = Status::from_headers(&parts.headers) {
            return match status.code() {
                Code::Ok => Ok(RealReplies::new(None)),
                _ => Err(status),
            };
        }
        if parts.status != http::StatusCode::OK {
            return Err(Status::new(
                Code::Unknown,
                format!(
                    "the real service answered HTTP {}, not a gRPC call's 200",
                    parts.status
                ),
            ));
        }
        Ok(RealReplies::new(Some(body)))
    }
}

/// The replies of a call performed for real
/// ([`ResolverArgs::real_replies`]): each decoded as it arrives, then the
/// status the real service ended the call with, as an `Err` unless `OK`.
#[must_use = "a stream does nothing unless polled"]
pub struct RealReplies<R> {
    /// `None` once the call has ended.
    body: Option<Body>,
    framer: Framer,
    _reply: PhantomData<fn() -> R>,
}

impl<R> RealReplies<R> {
    fn new(body: Option<Body>) -> Self {
        RealReplies {
            body,
            framer: Framer::default(),
            _reply: PhantomData,
        }
    }
}

impl<R> std::fmt::Debug for RealReplies<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealReplies")
            .field("ended", &self.body.is_none())
            .finish_non_exhaustive()
    }
}

impl<R> Unpin for RealReplies<R> {}

impl<R: prost::Message + Default> Stream for RealReplies<R> {
    type Item = Result<R, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(message) = this.framer.next_message() {
                return Poll::Ready(Some(message.and_then(|bytes| {
                    R::decode(bytes).map_err(|error| {
                        Status::new(
                            Code::Internal,
                            format!("a reply of the real service does not decode: {error}"),
                        )
                    })
                })));
            }
            let Some(body) = this.body.as_mut() else {
                return Poll::Ready(this.framer.finish().map(Err));
            };
            let frame = std::task::ready!(Pin::new(body).poll_frame(cx));
            let ended = match frame {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        this.framer.push(data);
                        continue;
                    }
                    Err(frame) => Some(
                        frame
                            .into_trailers()
                            .ok()
                            .and_then(|trailers| Status::from_headers(&trailers))
                            .unwrap_or_else(|| {
                                Status::new(
                                    Code::Internal,
                                    "the real service's trailers carry no grpc-status",
                                )
                            }),
                    ),
                },
                Some(Err(error)) => Some(Status::new(
                    Code::Unavailable,
                    format!("the real call failed: {error}"),
                )),
                None => Some(Status::new(
                    Code::Internal,
                    "the real service ended the call without a status",
                )),
            };
            this.body = None;
            if let Some(status) = ended.filter(|status| status.code() != Code::Ok) {
                return Poll::Ready(Some(Err(status)));
            }
        }
    }
}
