//! Servers' questions to the person (MCP elicitation): each is held until the window answers
//! it, and listed again for a window that was not listening when it was asked.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use porthole_mcp::{ElicitationAnswer, ElicitationRequest};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::error::{AppError, AppResult};

/// A server's question waiting for the person's answer in the window.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    #[ts(type = "number")]
    pub id: u64,
    pub server: String,
    pub message: String,
    /// The requested schema (form mode): an object schema of primitive properties.
    pub schema: Option<serde_json::Value>,
    /// The page to open (URL mode).
    pub url: Option<String>,
}

/// What the person did with a question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

type Waiting = (Question, tokio::sync::oneshot::Sender<ElicitationAnswer>);

/// The questions asked and not yet answered.
#[derive(Default)]
pub struct Questions {
    next: AtomicU64,
    waiting: Mutex<HashMap<u64, Waiting>>,
}

impl Questions {
    /// Holds a server's request until it is answered; returns the question for the window.
    pub fn ask(&self, request: ElicitationRequest) -> Question {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let question = Question {
            id,
            server: request.server,
            message: request.message,
            schema: request.schema,
            url: request.url,
        };
        self.waiting
            .lock()
            .unwrap()
            .insert(id, (question.clone(), request.respond));
        tracing::info!(id, server = %question.server, "asking the user");
        question
    }

    /// The person's answer: `accept` (with `content`, an object), `decline` or `cancel`.
    pub fn answer(&self, id: u64, action: ElicitationAction, content: Option<serde_json::Value>) -> AppResult<()> {
        let answer = match (action, content) {
            (ElicitationAction::Accept, Some(content)) if content.is_object() => ElicitationAnswer::Accept(content),
            // A URL-mode question: the page was opened; there is nothing more to say.
            (ElicitationAction::Accept, Some(serde_json::Value::Null)) => {
                ElicitationAnswer::Accept(serde_json::Value::Null)
            }
            (ElicitationAction::Accept, _) => return Err(AppError::invalid("accept needs the answer as an object")),
            (ElicitationAction::Decline, _) => ElicitationAnswer::Decline,
            (ElicitationAction::Cancel, _) => ElicitationAnswer::Cancel,
        };
        let waiting = self.waiting.lock().unwrap().remove(&id);
        let (_, respond) = waiting.ok_or_else(|| AppError::not_found("that question was already answered"))?;
        respond
            .send(answer)
            .map_err(|_| AppError::expired("the server stopped waiting for this answer"))
    }

    /// Questions still unanswered, oldest first.
    pub fn list(&self) -> Vec<Question> {
        let mut all: Vec<Question> = self.waiting.lock().unwrap().values().map(|(q, _)| q.clone()).collect();
        all.sort_by_key(|q| q.id);
        all
    }
}

/// A URL-mode question's page is opened only when it is a web page (`https://`, or `http://`):
/// never a file, a script or another app's scheme.
pub fn check_page_url(url: &str) -> AppResult<()> {
    let lower = url.trim().to_ascii_lowercase();
    let web = lower.starts_with("https://") || lower.starts_with("http://");
    if !web || url.chars().any(char::is_control) {
        return Err(AppError::invalid(format!(
            "Porthole opens only web pages (https:// or http://), not {url:?}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(server: &str) -> (ElicitationRequest, tokio::sync::oneshot::Receiver<ElicitationAnswer>) {
        let (respond, answered) = tokio::sync::oneshot::channel();
        let request = ElicitationRequest {
            server: server.into(),
            message: "Which city?".into(),
            schema: Some(serde_json::json!({"type": "object"})),
            url: None,
            respond,
        };
        (request, answered)
    }

    #[test]
    fn only_web_pages_are_opened() {
        assert!(check_page_url("https://example.com/auth?x=1").is_ok());
        assert!(check_page_url("http://localhost:8080/").is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "vscode://x",
            "https://a\nb",
        ] {
            assert!(check_page_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_question_is_listed_until_answered_and_the_answer_reaches_the_server() {
        let questions = Questions::default();
        let (first, mut first_answer) = request("weather");
        let (second, _) = request("maps");
        let q1 = questions.ask(first);
        let q2 = questions.ask(second);
        assert_eq!(
            questions.list().iter().map(|q| q.id).collect::<Vec<_>>(),
            [q1.id, q2.id]
        );

        let refused = questions.answer(q1.id, ElicitationAction::Accept, Some(serde_json::json!("Oslo")));
        assert_eq!(refused.unwrap_err().code, crate::error::ErrorCode::Invalid);
        questions
            .answer(
                q1.id,
                ElicitationAction::Accept,
                Some(serde_json::json!({"city": "Oslo"})),
            )
            .unwrap();
        match first_answer.try_recv().unwrap() {
            ElicitationAnswer::Accept(content) => assert_eq!(content["city"], "Oslo"),
            other => panic!("{other:?}"),
        }
        assert_eq!(questions.list().len(), 1);
        let again = questions.answer(q1.id, ElicitationAction::Decline, None).unwrap_err();
        assert_eq!(again.code, crate::error::ErrorCode::NotFound);
    }
}
