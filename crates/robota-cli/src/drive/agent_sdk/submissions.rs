//! User messages in, results out: each input line becomes a submission, a control
//! request's response or an answer to a question; each session event becomes output, and a
//! submission's end the `result` owed for it (dropped submissions are submitted again).

use serde_json::{Value, json};

use crate::sdk::commands::Submission;
use crate::sdk::{SessionEvent, TurnEnd};

use super::super::super::headless::{end_error, user_prompt};
use super::super::super::output;
use super::{Driver, Owed};

impl Driver {
    pub(super) fn submit(&mut self, owed: Owed, submission: Submission) {
        if owed == Owed::Result && self.printer.totals.budget_exceeded {
            // The budget is spent: the message gets its result without a model call.
            let value = output::result_message(
                &self.printer.session_id,
                &TurnEnd::Interrupted,
                "",
                std::time::Duration::ZERO,
                &self.printer.totals,
            );
            self.printer.emit(value);
            return;
        }
        let id = self.session.submit(submission.clone());
        self.pending.insert(id, (owed, submission));
        self.restart_deadline_clock();
    }

    /// A user message that cannot be sent gets an error result saying why (the program
    /// waits for one result per message) and the same line on stderr.
    fn refuse(&mut self, problem: &str) {
        eprintln!("robota: {problem}");
        let end = TurnEnd::Error(crate::sdk::TurnError::new(
            crate::sdk::ErrorKind::InvalidRequest,
            problem,
        ));
        let value = output::result_message(
            &self.printer.session_id,
            &end,
            "",
            std::time::Duration::ZERO,
            &self.printer.totals,
        );
        self.printer.emit(value);
    }

    /// One line of input: a user message, a control request, or something to skip.
    pub(super) fn on_line(&mut self, line: &str) {
        if line.trim().is_empty() {
            return;
        }
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("robota: skipped a stdin line that is not JSON: {e}");
                return;
            }
        };
        match value.get("type").and_then(Value::as_str) {
            Some("user") => match user_prompt(&value) {
                Ok(Some((text, images))) if images.is_empty() => {
                    self.submit(Owed::Result, Submission::parse(&text))
                }
                Ok(Some((text, images))) => {
                    self.submit(Owed::Result, Submission::with_images(text, images))
                }
                Ok(None) => eprintln!("robota: skipped a user message without text content"),
                Err(problem) => self.refuse(&format!("The user message was not sent: {problem}")),
            },
            Some("control_request") => {
                let response = self.on_control(&value);
                self.printer.print(&response.to_string());
            }
            Some("control_response") => self.on_answer(&value),
            Some("control_cancel_request" | "keep_alive") => {}
            other => eprintln!(
                "robota: skipped a stdin message of type {}",
                other.unwrap_or("(none)")
            ),
        }
    }

    /// The keepalive lines due now; `every` is their interval.
    pub(super) fn keepalive(&mut self, every: std::time::Duration) {
        for line in self.watch.keepalive_lines(&self.printer.session_id, every) {
            self.printer.emit(line);
        }
    }

    pub(super) fn on_event(&mut self, event: SessionEvent) {
        self.watch.observe(&event);
        match event {
            SessionEvent::PermissionRequest(request) => self.ask(request),
            SessionEvent::SubmissionStarted { id, .. } => {
                if self
                    .pending
                    .get(&id)
                    .is_some_and(|(o, _)| *o == Owed::Result)
                {
                    self.printer.reset_totals();
                }
            }
            SessionEvent::SubmissionEnded { id, mut outcome } => {
                let Some((owed, submission)) = self.pending.remove(&id) else {
                    return;
                };
                self.restart_deadline_clock();
                if let Some(error) = self.deadline.as_mut().and_then(|d| d.take_error(id)) {
                    // Stopped at its deadline: the result says what it waited on.
                    outcome.end = TurnEnd::Error(error);
                }
                let text = submission.text();
                (outcome.end, outcome.result) =
                    output::blocked_prompt_as_result(outcome.end, outcome.result);
                if owed == Owed::Nothing {
                    if let TurnEnd::Error(e) = &outcome.end {
                        eprintln!("robota: {text}: {}", e.line());
                    }
                    return;
                }
                self.printer.take_structured();
                let totals = &mut self.printer.totals;
                totals.num_turns = outcome.rounds;
                if let Some(error) = end_error(&outcome.end, self.args.max_turns)
                    && !totals.budget_exceeded
                {
                    totals.errors.push(error);
                }
                let value = output::result_message(
                    &self.printer.session_id,
                    &outcome.end,
                    &outcome.result,
                    outcome.duration,
                    totals,
                );
                self.printer.emit(value);
                let spent = self.printer.totals.budget_exceeded;
                self.printer.reset_totals();
                self.last_end = if spent {
                    TurnEnd::Error(crate::sdk::TurnError::new(
                        crate::sdk::ErrorKind::Config,
                        "the --max-budget-usd budget is spent",
                    ))
                } else {
                    outcome.end
                };
            }
            // An interrupt drops the queue with the running turn; what was dropped is
            // submitted again, in order, so every message still runs and gets its result.
            SessionEvent::SubmissionDropped(queued) => {
                if let Some((owed, submission)) = self.pending.remove(&queued.id) {
                    self.submit(owed, submission);
                }
                self.restart_deadline_clock();
            }
            SessionEvent::Usage {
                usage,
                model,
                cost_usd,
                api_duration,
            } => {
                let totals = &mut self.printer.totals;
                totals.add_call(&model, &usage, cost_usd);
                totals.api_duration += api_duration;
            }
            SessionEvent::State(state) => {
                if self.printer.crosses_budget(&state) {
                    self.session.abort();
                }
                self.model = state.model.clone();
                if self.mode != state.mode {
                    let status = json!({
                        "type": "system",
                        "subtype": "status",
                        "status": null,
                        "permissionMode": state.mode.as_str(),
                        "uuid": uuid::Uuid::new_v4().to_string(),
                        "session_id": self.printer.session_id,
                    });
                    self.printer.emit(status);
                }
                self.mode = state.mode;
            }
            other => self.printer.on_event(other),
        }
    }
}
