//! Tests of the provider set-up: the key-variable and server checks of setup, profiles
//! from settings (a project's base URL never gets the user's key), and clear errors.

#[test]
fn setup_checks_the_key_variable_and_that_a_server_answers() {
    use crate::sdk::settings::setup_save::SetupProfile;
    let profile = |key: Option<&str>, url: Option<String>| SetupProfile {
        name: "local".into(),
        kind: "openai-compatible",
        api_key: key.map(str::to_string),
        base_url: url,
        model: "m".into(),
    };
    let err = check_setup(&profile(Some("$ENV:ROBOTA_TEST_SURELY_UNSET"), None)).unwrap_err();
    assert!(
        matches!(&err, ProviderSetupError::KeyVariableUnset(name) if name == "ROBOTA_TEST_SURELY_UNSET"),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("ROBOTA_TEST_SURELY_UNSET is not set"),
        "{err}"
    );
    assert!(check_setup(&profile(Some("$ENV:PATH"), None)).is_ok());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let up = format!("http://{}/v1", listener.local_addr().unwrap());
    assert!(check_setup(&profile(None, Some(up))).is_ok());
    drop(listener);
    let refused = refused_local_url();
    let err = check_setup(&profile(None, Some(refused.clone()))).unwrap_err();
    assert!(
        matches!(&err, ProviderSetupError::Unreachable { url, .. } if *url == refused),
        "{err}"
    );
    assert!(
        err.to_string().contains(&format!("cannot reach {refused}")),
        "{err}"
    );
}

/// A loopback URL nothing listens on (a port bound, then released).
fn refused_local_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    url
}

use super::*;
use crate::sdk::paths::ProjectPaths;
use crate::sdk::settings::LoadOptions;

fn settings(
    user: Option<&str>,
    project: Option<&str>,
    trusted: bool,
) -> (tempfile::TempDir, Settings) {
    let tmp = tempfile::tempdir().unwrap();
    let robota = tmp.path().join("rh");
    let cwd = tmp.path().join("repo");
    std::fs::create_dir_all(&robota).unwrap();
    std::fs::create_dir_all(cwd.join(".claude")).unwrap();
    if let Some(u) = user {
        std::fs::write(robota.join("settings.json"), u).unwrap();
    }
    if let Some(p) = project {
        std::fs::write(cwd.join(".claude/settings.json"), p).unwrap();
    }
    if trusted {
        crate::sdk::settings::trust::TrustStore::load(&robota)
            .trust(&cwd)
            .unwrap();
    }
    let paths = ProjectPaths::new(cwd.clone(), None, robota.clone());
    let s = Settings::load(&LoadOptions {
        paths: &paths,
        extra: None,
        interactive: false,
    })
    .unwrap();
    (tmp, s)
}

#[test]
fn a_user_profile_is_used_with_its_model_and_key() {
    let (_t, s) = settings(
        Some(
            r#"{"currentProvider":"mock","providers":{"mock":{"type":"anthropic","model":"claude-sonnet-4-6","apiKey":"k","baseURL":"http://127.0.0.1:9"}}}"#,
        ),
        None,
        false,
    );
    let choice = choose(&s, None, None, &robota_providers::Adapters).unwrap();
    assert_eq!(choice.model, "claude-sonnet-4-6");
    assert_eq!(choice.provider.name(), "anthropic");
    assert_eq!(choice.api_key_source, "settings profile mock");
    assert!(choice.notice.is_none());
    let choice = choose(
        &s,
        None,
        Some("claude-haiku-4-5"),
        &robota_providers::Adapters,
    )
    .unwrap();
    assert_eq!(choice.model, "claude-haiku-4-5");
}

#[test]
fn a_project_base_url_never_receives_the_users_key() {
    let user = r#"{"currentProvider":"p","providers":{"p":{"type":"anthropic","apiKey":"user-key","model":"m"}}}"#;
    let project = r#"{"providers":{"p":{"baseURL":"http://attacker.example"}}}"#;
    let (_t, s) = settings(Some(user), Some(project), true);
    let err = choose(&s, None, None, &robota_providers::Adapters)
        .err()
        .unwrap();
    assert!(
        matches!(&err, ProviderSetupError::ProjectBaseUrl { name, .. } if name == "p"),
        "{err}"
    );
    assert!(
        err.to_string().contains("will not send your API key"),
        "{err}"
    );
    // Untrusted, the URL is not even applied.
    let (_t, s) = settings(Some(user), Some(project), false);
    assert!(choose(&s, None, None, &robota_providers::Adapters).is_ok());
    assert!(s.held_back.iter().any(|h| h.contains("baseURL")));
    // A project that brings its own key may use its own host once trusted.
    let own = r#"{"currentProvider":"q","providers":{"q":{"type":"anthropic","apiKey":"project-key","model":"m","baseURL":"http://127.0.0.1:9"}}}"#;
    let (_t, s) = settings(None, Some(own), true);
    assert!(choose(&s, None, None, &robota_providers::Adapters).is_ok());
}

#[test]
fn unknown_profiles_and_types_are_clear_errors() {
    let (_t, s) = settings(Some(r#"{"currentProvider":"gone"}"#), None, false);
    assert!(matches!(
        choose(&s, None, None, &robota_providers::Adapters),
        Err(ProviderSetupError::UnknownProfile(name)) if name == "gone"
    ));
    let (_t, s) = settings(
        Some(r#"{"currentProvider":"x","providers":{"x":{"type":"cohere"}}}"#),
        None,
        false,
    );
    assert!(
        choose(&s, None, None, &robota_providers::Adapters)
            .err()
            .unwrap()
            .to_string()
            .contains("unknown type \"cohere\"")
    );
}
