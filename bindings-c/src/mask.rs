//! Public IDs: `snowmint::IdMask`, the keyed permutation of a layout's IDs.

use core::ffi::c_char;

use snowmint::IdMask;

use crate::ffi::{arg, boundary, boundary_value, cstr, free_handle, out_mut, slice, R};
use crate::layout::snowmint_layout;
use crate::snowmint_status;

/// A public-ID mask: NIST SP 800-38G FF1 with AES-128 (a 16-byte key) or
/// AES-256 (a 32-byte key) over a layout's bits. `snowmint_mask_mask` maps
/// an ID to its public ID (an ID of the same layout), `snowmint_mask_unmask`
/// maps it back. Immutable: share one pointer between threads freely. It
/// keeps its own copy of the key; nothing the library returns shows it.
#[allow(non_camel_case_types)]
pub struct snowmint_mask {
    inner: IdMask,
}

fn new_mask(
    out_ptr: *mut *const snowmint_mask,
    layout: *const snowmint_layout,
    read: impl FnOnce() -> R<(Vec<u8>, Vec<u8>)>,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (out, l) = unsafe { (out_mut(out_ptr)?, arg(layout)?) };
        let (key, tweak) = read()?;
        let inner = IdMask::new(l.layout, &key, &tweak)?;
        *out = Box::into_raw(Box::new(snowmint_mask { inner }));
        Ok(())
    })
}

/// A mask for `layout` with the `key_len` bytes of `key` (16: AES-128, 32:
/// AES-256; another length is `SNOWMINT_STATUS_INVALID_OPTION`) and the
/// `tweak_len` bytes of `tweak` (NULL when 0; a tweak per table or tenant
/// gives the same ID unrelated public IDs). A layout of fewer than 20 bits is
/// `SNOWMINT_STATUS_INVALID_LAYOUT`. The layout may be freed afterwards.
/// Free the mask with `snowmint_mask_free`.
#[no_mangle]
pub unsafe extern "C" fn snowmint_mask_new(
    layout: *const snowmint_layout,
    key: *const u8,
    key_len: usize,
    tweak: *const u8,
    tweak_len: usize,
    out: *mut *const snowmint_mask,
) -> snowmint_status {
    new_mask(out, layout, || {
        // SAFETY: the caller promises `key_len` and `tweak_len` readable bytes.
        let (key, tweak) = unsafe { (slice(key, key_len)?, slice(tweak, tweak_len)?) };
        Ok((key.to_vec(), tweak.to_vec()))
    })
}

/// As `snowmint_mask_new`, with the key and tweak as NUL-terminated hex
/// strings (an even number of 0-9, a-f, A-F; other text is
/// `SNOWMINT_STATUS_INVALID_OPTION`); `tweak` NULL or "" is no tweak.
#[no_mangle]
pub unsafe extern "C" fn snowmint_mask_new_hex(
    layout: *const snowmint_layout,
    key_hex: *const c_char,
    tweak_hex: *const c_char,
    out: *mut *const snowmint_mask,
) -> snowmint_status {
    new_mask(out, layout, || {
        // SAFETY: NULL or NUL-terminated strings.
        let key = IdMask::bytes_from_hex(unsafe { cstr(key_hex) }?)?;
        let tweak = if tweak_hex.is_null() {
            Vec::new()
        } else {
            // SAFETY: as `key_hex`, and not NULL.
            IdMask::bytes_from_hex(unsafe { cstr(tweak_hex) }?)?
        };
        Ok((key, tweak))
    })
}

/// Writes the public ID of `id` into `*out`. `SNOWMINT_STATUS_INVALID_ID`
/// when `id` has bits set above the layout's width.
#[no_mangle]
pub unsafe extern "C" fn snowmint_mask_mask(
    mask: *const snowmint_mask,
    id: u64,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (m, out) = unsafe { (arg(mask)?, out_mut(out)?) };
        *out = m.inner.mask(id)?.get();
        Ok(())
    })
}

/// Writes the ID whose public ID is `public_id` into `*out`.
/// `SNOWMINT_STATUS_INVALID_ID` when `public_id` has bits set above the
/// layout's width.
#[no_mangle]
pub unsafe extern "C" fn snowmint_mask_unmask(
    mask: *const snowmint_mask,
    public_id: u64,
    out: *mut u64,
) -> snowmint_status {
    boundary(|| {
        // SAFETY: NULL or valid pointers.
        let (m, out) = unsafe { (arg(mask)?, out_mut(out)?) };
        *out = m.inner.unmask(public_id)?.get();
        Ok(())
    })
}

/// Frees a mask. NULL does nothing. No other thread may be using it.
#[no_mangle]
pub unsafe extern "C" fn snowmint_mask_free(mask: *const snowmint_mask) {
    // SAFETY: a pointer from a mask constructor, freed once.
    boundary_value((), || unsafe { free_handle(mask) })
}
