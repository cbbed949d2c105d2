//! How the session driver runs each kind of submission: built-in commands, `!commands`,
//! `/compact`, custom commands and skills (forked ones in a subagent), and prompts (with
//! their `@` attachments, checkpoint and the turn's grants).

use super::*;
use crate::commands::CommandError;

impl Driver {
    pub(super) async fn run_command(
        &mut self,
        id: SubmissionId,
        name: &str,
        scope: CommandScope,
        args: &str,
    ) -> (TurnEnd, String) {
        if scope == CommandScope::Client {
            let error = CommandError::ClientOnly(name.to_string());
            return (command_failed(error.to_string()), String::new());
        }
        if name == "mcp" {
            let output = crate::mcp::command::run(self.options.mcp.as_ref(), args).await;
            return self.shared.command_ended(id, name, output);
        }
        if name == "plugin" {
            let output = match self.options.plugins.clone() {
                Some(places) => run_plugin_command(places, args.to_string()).await,
                None => Err(CommandError::PluginsUnavailable),
            };
            return self.shared.command_ended(id, name, output);
        }
        let agents = self.options.agents.as_deref();
        let report = match name {
            "agents" => Some(commands::agents_report(agents)),
            "skills" => Some(commands::skills_report(&self.options.commands)),
            "lsp" => Some(commands::lsp_report(self.options.lsp.as_deref())),
            "tasks" => {
                let output = self.tasks.run(args);
                return self.shared.command_ended(id, name, output);
            }
            "language" => {
                let output = self.run_language(args).await;
                return self.shared.command_ended(id, name, output);
            }
            "doctor" => {
                let facts = commands::doctor::DoctorFacts {
                    endpoint: &self.options.endpoint,
                    provider: self.session.provider_name(),
                    model: &self.session.config().model,
                    startup_warnings: &self.options.startup_warnings,
                    mcp: self
                        .options
                        .mcp
                        .as_ref()
                        .map(|m| m.reports())
                        .unwrap_or_default(),
                    log: self.session.log_path(),
                    web_search: self.web_search_offer(),
                    sandbox: robota_tools::sandbox::support(),
                    confinement: self.session.policy_snapshot().confinement_by_mode(),
                    bash_shell: commands::doctor::BashShell::of_this_machine(),
                };
                let report = commands::doctor::doctor_report(facts).await;
                return self.shared.command_ended(id, name, Ok(report));
            }
            "status" => Some(commands::status_report(
                &self.session,
                &self.options.endpoint,
                &self.options.commands,
                agents,
                self.options.mcp.as_ref().map_or(0, |m| m.reports().len()),
            )),
            _ => None,
        };
        if let Some(report) = report {
            return self.shared.command_ended(id, name, Ok(report));
        }
        let clearing = name == "clear";
        if clearing {
            self.fire_session_end("clear").await;
        }
        let result = commands::execute(&mut self.session, &self.options.commands, name, args);
        if clearing && result.is_ok() {
            self.fire_session_start("clear").await;
            self.shared.update_state(|s| s.context = None);
        }
        self.refresh_state();
        let output = result.map(|CommandEffect::Output(output)| output);
        self.shared.command_ended(id, name, output)
    }

    /// `/language [language|default]`: shows the response language, or sets it (saved in
    /// the user settings) and rebuilds the system prompt with it.
    /// How this session lets the model search the web, for `/doctor`.
    fn web_search_offer(&self) -> commands::doctor::WebSearchOffer {
        use commands::doctor::WebSearchOffer;
        if self
            .session
            .tools()
            .names()
            .iter()
            .any(|n| n == "WebSearch")
        {
            WebSearchOffer::Backend
        } else if self
            .session
            .config()
            .server_tools
            .iter()
            .any(|t| matches!(t, robota_core::ServerTool::WebSearch { .. }))
        {
            WebSearchOffer::ServerSide
        } else {
            WebSearchOffer::NotOffered
        }
    }

    async fn run_language(&mut self, args: &str) -> Result<String, CommandError> {
        let Some(instructions) = self.options.instructions.clone() else {
            return Err(CommandError::FixedSystemPrompt);
        };
        let args = args.trim();
        if args.is_empty() {
            return Ok(match instructions.language() {
                Some(language) => format!(
                    "Answers are written in {language}. /language default follows the language you write in again."
                ),
                None => "No language is set: answers follow the language you write in. /language <language> sets one.".to_string(),
            });
        }
        let language =
            (!matches!(args, "default" | "auto" | "none" | "off")).then(|| args.to_string());
        let path = instructions
            .set_language(language.clone())
            .map_err(CommandError::LanguageNotSaved)?;
        self.rebuild_system_prompt().await;
        Ok(match language {
            Some(language) => format!(
                "Answers will be written in {language} (saved in {}).",
                path.display()
            ),
            None => format!(
                "Answers follow the language you write in again (saved in {}).",
                path.display()
            ),
        })
    }

    /// Runs a `!command` to its end (an abort interrupts it), records it with its output
    /// as a user note and reports it.
    pub(super) async fn run_shell(
        &mut self,
        id: SubmissionId,
        command: String,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        if command.trim().is_empty() {
            return (
                command_failed("Type a command after ! to run it"),
                0,
                String::new(),
            );
        }
        let cwd = self.session.config().cwd.clone();
        let env = self.session.config().env.clone();
        let cancel = CancellationToken::new();
        let shared = self.shared.clone();
        let tail = move |lines| shared.emit(SessionEvent::ShellOutputTail { id, lines });
        let (mut busy, _) = self.busy(&cancel);
        let run = busy
            .run(
                run_shell_command(&command, &cwd, &env, &cancel, &tail),
                controls,
            )
            .await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        self.session.record_user_note(run.note);
        self.emit(SessionEvent::ShellOutput {
            id,
            command,
            output: run.output.clone(),
            exit_code: run.exit_code,
        });
        let end = if cancel.is_cancelled() {
            TurnEnd::Interrupted
        } else {
            TurnEnd::Success
        };
        (end, 0, run.output)
    }

    /// `/compact [focus]`: the summary call runs like a turn (an abort interrupts it and
    /// leaves the history as it was); the result says how far the context shrank.
    pub(super) async fn run_compact(
        &mut self,
        focus: &str,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, String) {
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let (mut busy, session) = self.busy(&cancel);
        let compact = session.compact(CompactTrigger::Manual, focus, &sink, &cancel);
        let compacted = busy.run(compact, controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        match compacted {
            Ok(report) => {
                let context = ContextState {
                    used_tokens: report.post_tokens,
                    window: self.session.config().context_window,
                };
                self.emit(SessionEvent::Context(context));
                self.shared.update_state(|s| s.context = Some(context));
                let result = format!(
                    "Compacted the conversation: {} → {} tokens.",
                    report.pre_tokens, report.post_tokens
                );
                (TurnEnd::Success, result)
            }
            Err(CompactError::Interrupted) => (TurnEnd::Interrupted, String::new()),
            Err(CompactError::Blocked(reason)) => {
                let message = CompactError::Blocked(reason).message();
                let error = TurnError::new(ErrorKind::CompactBlocked, message)
                    .with_hint("the PreCompact hooks in your settings decide this");
                (TurnEnd::Error(error), String::new())
            }
            Err(CompactError::Failed(err)) => {
                let error = TurnError::from_provider(&err, &self.options.endpoint);
                (TurnEnd::Error(error), String::new())
            }
            Err(other) => (command_failed(other.message()), String::new()),
        }
    }

    /// A custom command or skill typed as `/name args`: its prompt is worked out (its
    /// `` !`commands` `` run; an abort stops them), then it runs as a turn with its
    /// `allowed-tools` granted and its `model` in use for that turn only.
    pub(super) async fn run_prompt_command(
        &mut self,
        id: SubmissionId,
        command: &PromptCommand,
        args: &str,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let policy = self.session.policy_snapshot();
        let cwd = self.session.config().cwd.clone();
        let env = self.session.config().env.clone();
        let session_id = self.session.id().to_string();
        let hooks = self
            .session
            .hook_handle(Arc::new(super::update_sink(self.shared.clone())));
        let context = ExpandContext {
            cwd: &cwd,
            env: &env,
            session_id: &session_id,
            policy,
            cancel: &cancel,
            hooks: hooks.as_ref(),
        };
        let (mut busy, _) = self.busy(&cancel);
        let expanded = busy.run(expand(command, args, context), controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        let prompt = match expanded {
            Ok(expanded) => {
                for line in &expanded.refused {
                    self.emit(SessionEvent::Warning(line.message(&command.name)));
                }
                expanded.prompt
            }
            Err(_) if cancel.is_cancelled() => return (TurnEnd::Interrupted, 0, String::new()),
            Err(refused) => return (command_failed(refused.to_string()), 0, String::new()),
        };
        if let (Some(agent_type), Some(agents)) = (&command.fork_agent, self.subagents.clone()) {
            return self
                .run_forked(id, command, agent_type, &prompt, &agents, controls)
                .await;
        }
        let policy = self.session.policy_handle();
        self.grants.grant(&policy, &command.allowed_tools);
        let previous_model = command.model.as_ref().map(|model| {
            let previous = self.session.config().model.clone();
            let model = models::resolve(model, self.session.provider_name(), &previous);
            let window = models::lookup(&model).context_window;
            self.session.set_model(model, window);
            previous
        });
        let outcome = self.run_turn(prompt, Vec::new(), controls).await;
        if let Some(previous) = previous_model {
            let window = models::lookup(&previous).context_window;
            self.session.set_model(previous, window);
        }
        outcome
    }

    /// A `context: fork` command or skill: its prompt runs in a subagent (no conversation
    /// history; its events reach clients tagged with this submission), and the report
    /// joins the conversation as a note, so the next turn knows it.
    pub(super) async fn run_forked(
        &mut self,
        id: SubmissionId,
        command: &PromptCommand,
        agent_type: &str,
        prompt: &str,
        agents: &AgentTool,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let parent = format!("submission-{}", id.0);
        let task = SubagentTask {
            agent_type,
            description: &command.name,
            prompt,
            model: command.model.as_deref(),
            parent_tool_use_id: &parent,
            allow: &command.allowed_tools,
            cancel: &cancel,
        };
        let (mut busy, _) = self.busy(&cancel);
        let output = busy.run(agents.run(task), controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        if cancel.is_cancelled() {
            return (TurnEnd::Interrupted, 0, String::new());
        }
        if output.is_error {
            return (command_failed(output.content), 0, String::new());
        }
        self.session.record_user_note(format!(
            "/{} ran in a {agent_type} subagent and reported:\n{}",
            command.name, output.content
        ));
        self.emit(SessionEvent::CommandOutput {
            id,
            command: command.name.clone(),
            output: output.content.clone(),
        });
        (TurnEnd::Success, 0, output.content)
    }

    /// Steered text the turn made no further call for: queued first as prompts (dropped,
    /// and so given back to the client, after an interrupt).
    fn requeue_steered(&mut self, inbox: &robota_core::engine::SteeringInbox, interrupted: bool) {
        let left: Vec<QueuedSubmission> = inbox
            .take()
            .into_iter()
            .map(|(tag, text)| QueuedSubmission {
                id: SubmissionId(tag),
                text,
            })
            .collect();
        if !left.is_empty() {
            self.shared.update_state(|s| s.steering.clear());
        }
        if interrupted {
            for dropped in left {
                self.emit(SessionEvent::SubmissionDropped(dropped));
            }
            return;
        }
        for queued in left.into_iter().rev() {
            self.queue
                .push_front((queued.id, Submission::Prompt(queued.text.clone())));
            self.shared
                .update_state(|s| s.queue.insert(0, queued.clone()));
            self.emit(SessionEvent::SubmissionQueued(queued));
        }
    }

    pub(super) async fn run_turn(
        &mut self,
        prompt: String,
        images: Vec<ImageSource>,
        controls: &mut mpsc::UnboundedReceiver<Control>,
    ) -> (TurnEnd, u32, String) {
        let cancel = CancellationToken::new();
        let sink = self.sink();
        let mut blocks = vec![Block::text(prompt.clone())];
        blocks.extend(images.into_iter().map(|source| Block::Image { source }));
        let attached = {
            let policy = self.session.policy_snapshot();
            let config = self.session.config();
            attachments::attach(
                &prompt,
                &config.cwd,
                self.session.tools(),
                &policy,
                &config.env,
            )
            .await
        };
        for warning in attached.warnings {
            self.emit(SessionEvent::Warning(warning));
        }
        if !attached.shown.is_empty() {
            self.emit(SessionEvent::Attached(attached.shown));
        }
        blocks.extend(attached.blocks);
        let prompt_id = uuid::Uuid::new_v4().to_string();
        let checkpoint = self.start_checkpoint(&prompt_id);
        let inbox = self.session.steering_inbox();
        let (mut busy, session) = self.busy(&cancel);
        busy.steering = Some(inbox.clone());
        let turn = session.run_turn_as(prompt_id.clone(), blocks, &sink, &cancel);
        let outcome = busy.run(turn, controls).await;
        let mode_change = busy.mode_change;
        self.keep_mode(mode_change);
        self.requeue_steered(&inbox, cancel.is_cancelled());
        self.grants.revoke_all(&self.session.policy_handle());
        if let Some(pending) = checkpoint
            && let Some(start) = self.opened_checkpoint(pending).await
        {
            self.close_checkpoint(&prompt_id, start).await;
        }
        let result = last_answer(self.session.history());
        let end = match outcome.stop {
            TurnStop::Completed(_) => TurnEnd::Success,
            TurnStop::HookStopped(reason) => {
                let shown = if reason.is_empty() {
                    "A hook stopped the turn".to_string()
                } else {
                    format!("A hook stopped the turn: {reason}")
                };
                self.emit(SessionEvent::Notice(shown));
                TurnEnd::Success
            }
            TurnStop::PromptBlocked(reason) => TurnEnd::Error(
                TurnError::new(
                    ErrorKind::HookBlocked,
                    format!("The prompt was blocked by a UserPromptSubmit hook: {reason}"),
                )
                .with_hint("the UserPromptSubmit hooks in your settings decide this"),
            ),
            TurnStop::Interrupted => TurnEnd::Interrupted,
            TurnStop::MaxRounds => TurnEnd::MaxTurns,
            TurnStop::ContextFull => TurnEnd::ContextFull,
            TurnStop::Failed(err) => {
                TurnEnd::Error(TurnError::from_provider(&err, &self.options.endpoint))
            }
        };
        (end, outcome.rounds, result)
    }
}

/// `/plugin …`: the plugin manager, off the runtime's threads (it copies files and runs git).
async fn run_plugin_command(
    places: crate::paths::ProjectPaths,
    args: String,
) -> Result<String, CommandError> {
    use crate::plugins::manage::{parse_words, perform};
    let action = parse_words(&args)?;
    let report = tokio::task::spawn_blocking(move || perform(&places, &action))
        .await
        .map_err(|source| CommandError::Stopped {
            command: "plugin",
            source,
        })?;
    Ok(report?)
}
