//! `/plugin …` in the full-screen UI: a marketplace folder added, a plugin installed from
//! it and listed, each result shown as a notice — the files it writes counted on disk.

use crate::support::MockServer;
use crate::support::project::project;
use crate::{exit_cleanly, start};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn plugin_marketplace_add_install_and_list_show_their_results() {
    let project = project();
    let market = project.root.parent().unwrap().join("mk");
    write(
        &market.join(".claude-plugin/marketplace.json"),
        r#"{"name": "team", "owner": {"name": "T"}, "plugins": [{"name": "deploy", "source": "./deploy"}]}"#,
    );
    write(
        &market.join("deploy/.claude-plugin/plugin.json"),
        r#"{"name": "deploy", "version": "1.2.0"}"#,
    );
    write(&market.join("deploy/commands/ship.md"), "Ship it.");
    let server = MockServer::start(vec![]);
    let mut pty = start(&project, &server, &[]);
    pty.wait_for_text("Ask anything");
    pty.type_text(&format!("/plugin marketplace add {}", market.display()));
    pty.send(b"\r");
    pty.wait_for_text("Added marketplace team");
    pty.type_text("/plugin install deploy@team");
    pty.send(b"\r");
    pty.wait_for_text("Installed deploy@team 1.2.0");
    assert!(
        project
            .home
            .join("plugins/cache/team/deploy/1.2.0/commands/ship.md")
            .is_file()
    );
    pty.type_text("/plugin list");
    pty.send(b"\r");
    pty.wait_for_text("deploy@team 1.2.0  enabled");
    assert!(server.requests().is_empty(), "no model call for /plugin");
    exit_cleanly(&mut pty);
}
