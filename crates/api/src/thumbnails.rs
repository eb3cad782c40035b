//! Previews of attached images: the chat shows an image only as a
//! thumbnail decoded here within limits and encoded again as PNG, so
//! nothing a person uploaded reaches a browser as it came. Raster formats
//! only (PNG, JPEG, GIF, WebP); SVG, HTML and anything active is never
//! rendered.

use std::sync::LazyLock;

use image::{ImageFormat, ImageReader, Limits};
use lattice_core::Error;

/// The longest side of a thumbnail, in pixels.
pub const SIDE: u32 = 256;
/// The largest image decoded: wider or taller is refused before its
/// pixels are read (a decompression bomb declares its size first).
const DIMENSION_MAX: u32 = 8192;
/// The most memory one decoding may take.
const ALLOC_MAX: u64 = 64 * 1024 * 1024;
/// Decodings at once: each may take [`ALLOC_MAX`].
static AT_ONCE: LazyLock<tokio::sync::Semaphore> = LazyLock::new(|| tokio::sync::Semaphore::new(2));

/// The stored types a thumbnail is made of (`lattice_core::file::PREVIEWABLE`,
/// which the chat reads too).
pub fn previewed(media_type: &str) -> Option<ImageFormat> {
    lattice_core::file::previewable(media_type).then(|| ImageFormat::from_mime_type(media_type)).flatten()
}

/// A PNG of at most [`SIDE`] pixels a side from `bytes` of `format`.
pub async fn thumbnail(bytes: Vec<u8>, format: ImageFormat) -> Result<Vec<u8>, Error> {
    let _turn = AT_ONCE.acquire().await.map_err(|_| Error::unavailable("thumbnails are not made now"))?;
    tokio::task::spawn_blocking(move || make(&bytes, format)).await.map_err(|e| Error::unavailable(format!("the thumbnailer failed: {e}")))?
}

fn make(bytes: &[u8], format: ImageFormat) -> Result<Vec<u8>, Error> {
    let refused = |why: String| Error::field("file", "image", why);
    let mut reader = ImageReader::with_format(std::io::Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(DIMENSION_MAX);
    limits.max_image_height = Some(DIMENSION_MAX);
    limits.max_alloc = Some(ALLOC_MAX);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| refused(format!("the image cannot be previewed: {e}")))?;
    let small = image.thumbnail(SIDE, SIDE);
    let mut out = std::io::Cursor::new(Vec::new());
    small.write_to(&mut out, ImageFormat::Png).map_err(|e| refused(format!("the preview cannot be written: {e}")))?;
    Ok(out.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 128]));
        let mut out = std::io::Cursor::new(Vec::new());
        image.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    /// CRC-32 (ISO 3309), as PNG's chunks carry it.
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xffff_ffffu32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 { (crc >> 1) ^ 0xedb8_8320 } else { crc >> 1 };
            }
        }
        !crc
    }

    #[tokio::test]
    async fn a_thumbnail_is_a_new_png_at_most_256_a_side() {
        let made = thumbnail(png(1000, 400), ImageFormat::Png).await.unwrap();
        let back = image::load_from_memory_with_format(&made, ImageFormat::Png).unwrap();
        assert_eq!((back.width(), back.height()), (256, 102));
    }

    #[tokio::test]
    async fn a_decompression_bomb_is_refused_before_its_pixels_are_read() {
        // A PNG that declares 20000 × 20000 pixels (1.2 GB of them), with
        // almost no data: IHDR's width and height (bytes 16..24), its CRC
        // made right again (29..33), so only the limits refuse it.
        let mut bomb = png(1, 1);
        bomb[16..20].copy_from_slice(&20000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&20000u32.to_be_bytes());
        let crc = crc32(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        let refused = thumbnail(bomb, ImageFormat::Png).await.unwrap_err();
        assert!(refused.to_string().contains("cannot be previewed") && refused.to_string().contains("limit"), "{refused}");
        let text_named_png = thumbnail(b"not an image at all".to_vec(), ImageFormat::Png).await;
        assert!(text_named_png.is_err());
        assert_eq!(previewed("image/svg+xml"), None);
        assert_eq!(previewed("text/html"), None);
    }
}
