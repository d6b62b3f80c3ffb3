//! `IdMask`: public IDs, the core's keyed permutation of a layout's IDs.
//! Node only: the WebAssembly package leaves it out (a key does not belong
//! in a page).

use napi::bindgen_prelude::{Env, FromNapiValue, Uint8Array, Uint8ArraySlice, Unknown};
use napi::JsValue;
use napi_derive::napi;

use crate::{value, Js, Layout, OrThrow};

/// A key or tweak: a `Uint8Array` (a `Buffer` is one), or a hex string (the
/// core reads the hex and refuses any other type).
fn key_bytes(env: &Env, v: &Unknown<'_>, arg: &str) -> napi::Result<Vec<u8>> {
    let given = if v.is_typedarray()? {
        // SAFETY: a live value of this call.
        match unsafe { Uint8ArraySlice::from_napi_value(env.raw(), v.raw()) } {
            Ok(bytes) => return Ok(bytes.to_vec()),
            Err(_) => snowmint::Value::Other("a typed array that is not a Uint8Array"),
        }
    } else {
        value(v)?
    };
    snowmint::IdMask::bytes_from_value(given, arg).or_throw(env)
}

/// Public IDs: a keyed, reversible mask over a layout's IDs. `mask(id)` is
/// the public ID (an ID of the same layout), `unmask(publicId)` gives the ID
/// back. NIST SP 800-38G FF1 with AES-128 (a 16-byte key) or AES-256 (a
/// 32-byte key); key and tweak as `Uint8Array`/`Buffer` or hex string. A
/// key of another length throws `invalid_option`; a public ID outside the
/// layout's space `invalid_id`. Nothing shows the key.
#[napi]
pub struct IdMask {
    inner: snowmint::IdMask,
    tweak: Vec<u8>,
}

#[napi]
impl IdMask {
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        #[napi(ts_arg_type = "Layout | string")] layout: Js,
        #[napi(ts_arg_type = "Uint8Array | string")] key: Unknown<'_>,
        #[napi(ts_arg_type = "Uint8Array | string")] tweak: Option<Unknown<'_>>,
    ) -> napi::Result<Self> {
        let layout = layout.0.to_layout().or_throw(env)?;
        let key = key_bytes(env, &key, "key")?;
        let tweak = match tweak {
            Some(t) if !matches!(value(&t)?, snowmint::Value::Absent) => {
                key_bytes(env, &t, "tweak")?
            }
            _ => Vec::new(),
        };
        let inner = snowmint::IdMask::new(layout, &key, &tweak).or_throw(env)?;
        Ok(IdMask { inner, tweak })
    }

    /// The public ID of `id` under this key and tweak.
    #[napi]
    pub fn mask(&self, env: &Env, #[napi(ts_arg_type = "IdLike")] id: Js) -> napi::Result<u64> {
        let id = id.0.to_id().or_throw(env)?;
        Ok(self.inner.mask(id).or_throw(env)?.get())
    }

    /// The ID whose public ID is `publicId`.
    #[napi]
    pub fn unmask(
        &self,
        env: &Env,
        #[napi(ts_arg_type = "IdLike")] public_id: Js,
    ) -> napi::Result<u64> {
        let public = public_id.0.to_id().or_throw(env)?;
        Ok(self.inner.unmask(public).or_throw(env)?.get())
    }

    /// The layout whose IDs this mask permutes.
    #[napi(getter)]
    pub fn layout(&self) -> Layout {
        Layout {
            inner: *self.inner.layout(),
        }
    }

    /// The tweak's bytes (a tweak is not a secret).
    #[napi(getter)]
    pub fn tweak(&self) -> Uint8Array {
        Uint8Array::new(self.tweak.clone())
    }
}
