//! Permission questions as `session/request_permission`: the choices offered (allow once,
//! always allow the suggested rule, reject), and the client's answer back to the waiting
//! tool call; "always" saves the rule and records it as trusted.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse,
};

use crate::sdk::assembly as paths;
use crate::sdk::settings::trust::TrustStore;
use crate::sdk::{PermissionChoice, PermissionRequest};
use crate::session::PermissionAnswer;

use super::{Driver, Internal, updates};

const ALLOW_ONCE: &str = "allow_once";
const ALLOW_ALWAYS: &str = "allow_always";
const REJECT_ONCE: &str = "reject_once";

impl Driver {
    /// A permission question, asked of the client as `session/request_permission`.
    pub(super) fn ask(&mut self, key: &str, request: PermissionRequest) {
        let number = self.next_question;
        self.next_question += 1;
        let options = request
            .choices
            .iter()
            .map(|choice| match choice {
                PermissionChoice::Allow => {
                    PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce)
                }
                PermissionChoice::AllowAlways { rule } => PermissionOption::new(
                    ALLOW_ALWAYS,
                    format!("Always allow {rule}"),
                    PermissionOptionKind::AllowAlways,
                ),
                PermissionChoice::Deny => {
                    PermissionOption::new(REJECT_ONCE, "Reject", PermissionOptionKind::RejectOnce)
                }
            })
            .collect();
        let call = updates::permission_call(
            &request.tool_use_id,
            &request.tool_name,
            &request.input,
            request.preview.as_ref(),
        );
        let question = RequestPermissionRequest::new(key.to_string(), call, options);
        let internal = self.internal.clone();
        let session = key.to_string();
        let sent = self
            .cx
            .send_request(question)
            .on_receiving_result(async move |answer| {
                let _ = internal.send(Internal::Permission {
                    session,
                    question: number,
                    answer,
                });
                Ok(())
            });
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        match sent {
            Ok(()) => {
                live.questions.insert(number, request);
            }
            Err(e) => {
                let mut request = request;
                request.respond(PermissionAnswer::Deny(Some(format!(
                    "the editor could not be asked: {e}"
                ))));
            }
        }
    }

    pub(super) fn on_permission(
        &mut self,
        key: &str,
        number: u64,
        answer: Result<RequestPermissionResponse, Error>,
    ) {
        let Some(live) = self.sessions.get_mut(key) else {
            return;
        };
        let Some(mut request) = live.questions.remove(&number) else {
            return;
        };
        let outcome = match answer {
            Ok(response) => response.outcome,
            Err(e) => {
                request.respond(PermissionAnswer::Deny(Some(format!(
                    "the permission question failed: {e}"
                ))));
                return;
            }
        };
        match outcome {
            RequestPermissionOutcome::Selected(selected) => match selected.option_id.0.as_ref() {
                ALLOW_ONCE => request.respond(PermissionAnswer::Allow),
                ALLOW_ALWAYS if !request.suggested_rule.is_empty() => {
                    match request.allow_and_save(&live.cwd) {
                        Ok(path) => {
                            let home = paths::robota_home();
                            if let Err(e) = TrustStore::load(&home)
                                .remember_saved_rule(&live.cwd, &request.suggested_rule)
                            {
                                eprintln!(
                                    "robota: cannot record the rule in {}: {e}",
                                    home.display()
                                );
                            }
                            eprintln!(
                                "robota: saved {} to {} — robota won't ask again",
                                request.suggested_rule,
                                path.display()
                            );
                        }
                        Err(e) => eprintln!(
                            "robota: allowed {} for this session, but saving the rule failed: {e}",
                            request.suggested_rule
                        ),
                    }
                }
                REJECT_ONCE => request.respond(PermissionAnswer::Deny(None)),
                other => request.respond(PermissionAnswer::Deny(Some(format!(
                    "the editor answered with an unknown option {other:?}"
                )))),
            },
            RequestPermissionOutcome::Cancelled => request.respond(PermissionAnswer::Deny(Some(
                "the editor cancelled the question".to_string(),
            ))),
            #[allow(unreachable_patterns)]
            _ => request.respond(PermissionAnswer::Deny(None)),
        }
    }
}
