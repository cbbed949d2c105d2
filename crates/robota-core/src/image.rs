//! Images the model is shown: the media type read from a file's magic bytes (PNG, JPEG,
//! GIF, WebP — the kinds every provider takes), the size limit, and the inline base64
//! [`ImageSource`] built from the bytes. A file over the limit or of another kind is
//! refused with a message that says why; nothing is downscaled.

use base64::Engine as _;

use super::message::ImageSource;

/// The largest image sent, in bytes of the file (Anthropic's per-image limit).
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// What one image counts for in a context estimate, in characters (4 to a token): about
/// 1,600 tokens, what Anthropic charges for the largest image it takes without shrinking
/// (providers scale larger ones down), whatever the size of the base64.
pub const IMAGE_CHARS_ESTIMATE: usize = 1_600 * 4;

/// File name endings that name an image, for paths typed or pasted.
pub const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "gif", "webp"];

/// The media type of `bytes` when they start like a PNG, JPEG, GIF or WebP file.
pub fn sniff_media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Whether `path` ends like an image file's name.
pub fn has_image_extension(path: &std::path::Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.as_str()))
}

/// Why bytes could not become an image.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Not a PNG, JPEG, GIF or WebP file.
    #[error("not a PNG, JPEG, GIF or WebP image (judged by its contents)")]
    NotAnImage,
    /// Larger than [`MAX_IMAGE_BYTES`]; holds the size.
    #[error(
        "the image is {:.1} MB; images over {} MB are not sent (shrink it first)",
        *.0 as f64 / (1024.0 * 1024.0),
        MAX_IMAGE_BYTES / (1024 * 1024)
    )]
    TooLarge(usize),
}

/// Why an image that arrived encoded (stream-json, ACP, an MCP result) cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodedImageError {
    /// A source `type` other than `base64` (a URL, a file id…).
    #[error("image source type {0:?} is not supported (only \"base64\")")]
    UnsupportedSource(String),
    /// The data is not valid base64.
    #[error("image data is not valid base64: {0}")]
    Base64(#[source] base64::DecodeError),
    /// The decoded bytes are not a PNG, JPEG, GIF or WebP file.
    #[error("image data is {}", ImageError::NotAnImage)]
    NotAnImage,
    /// The decoded image is over the size limit.
    #[error(transparent)]
    Image(#[from] ImageError),
}

/// The inline image for `bytes`, its media type judged by their contents.
pub fn image_from_bytes(bytes: &[u8]) -> Result<ImageSource, ImageError> {
    let media_type = sniff_media_type(bytes).ok_or(ImageError::NotAnImage)?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge(bytes.len()));
    }
    Ok(ImageSource::base64(
        media_type,
        base64::engine::general_purpose::STANDARD.encode(bytes),
    ))
}

/// An image that arrived already encoded (stream-json input), checked: valid base64 of a
/// PNG, JPEG, GIF or WebP within the size limit. The media type is set from the contents
/// (a mislabelled image would be refused by the provider).
pub fn checked_base64_image(source: &ImageSource) -> Result<ImageSource, EncodedImageError> {
    if source.kind != "base64" {
        return Err(EncodedImageError::UnsupportedSource(source.kind.clone()));
    }
    let data: String = source.data.split_whitespace().collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&data)
        .map_err(EncodedImageError::Base64)?;
    let media_type = sniff_media_type(&bytes).ok_or(EncodedImageError::NotAnImage)?;
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(ImageError::TooLarge(bytes.len()).into());
    }
    Ok(ImageSource::base64(media_type, data))
}

#[cfg(any(test, feature = "test-support"))]
/// Images for tests of this and other crates (feature `test-support`).
pub mod fixtures {
    /// A valid 1×1 PNG.
    pub const PNG_1X1: &[u8] = &[
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
        0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
        0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8,
        0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x00, 0x01, 0xff, 0x89, 0x99, 0x3d, 0x1d, 0x00, 0x00,
        0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
}

#[cfg(test)]
mod tests {
    use super::fixtures::PNG_1X1;
    use super::*;

    #[test]
    fn kinds_are_judged_by_contents_not_names() {
        assert_eq!(sniff_media_type(PNG_1X1), Some("image/png"));
        assert_eq!(
            sniff_media_type(b"\xff\xd8\xff\xe0rest"),
            Some("image/jpeg")
        );
        assert_eq!(sniff_media_type(b"GIF89a...."), Some("image/gif"));
        assert_eq!(
            sniff_media_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(sniff_media_type(b"RIFF\0\0\0\0WAVEfmt "), None);
        assert_eq!(sniff_media_type(b"hello"), None);
        assert!(has_image_extension(std::path::Path::new("a/B.JPG")));
        assert!(!has_image_extension(std::path::Path::new("a/b.txt")));
    }

    #[test]
    fn images_encode_and_refuse_what_is_not_one_or_too_big() {
        let image = image_from_bytes(PNG_1X1).unwrap();
        assert_eq!(image.media_type, "image/png");
        assert!(image.data.starts_with("iVBORw0KGgo"));
        assert_eq!(checked_base64_image(&image), Ok(image.clone()));
        assert_eq!(image_from_bytes(b"text"), Err(ImageError::NotAnImage));
        let mut big = PNG_1X1.to_vec();
        big.resize(MAX_IMAGE_BYTES + 1, 0);
        let err = image_from_bytes(&big).unwrap_err();
        assert_eq!(err, ImageError::TooLarge(MAX_IMAGE_BYTES + 1));
        assert!(err.to_string().contains("over 5 MB"), "{err}");
        let mislabelled = ImageSource::base64("image/jpeg", image.data.clone());
        assert_eq!(checked_base64_image(&mislabelled), Ok(image.clone()));
        let junk = ImageSource::base64("image/png", "!!!");
        assert!(
            checked_base64_image(&junk)
                .unwrap_err()
                .to_string()
                .contains("base64")
        );
        let text = ImageSource::base64("image/png", "aGVsbG8=");
        assert_eq!(
            checked_base64_image(&text).unwrap_err().to_string(),
            "image data is not a PNG, JPEG, GIF or WebP image (judged by its contents)"
        );
    }
}
