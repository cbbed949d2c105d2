//! STUB
pub fn copy_text(answer: &str, _b: Option<usize>) -> Result<String, String> { Ok(answer.to_string()) }
pub fn osc52(text: &str) -> String { text.to_string() }
