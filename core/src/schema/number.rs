//! Serialization of JSON `number` fields held as `f64`.
//!
//! JSON does not tell `50` from `50.0`, but byte-for-byte round trips and readable output do:
//! integral values are written without a fraction, everything else as a float.

use serde::Serializer;

/// Largest magnitude below which every integer is exactly representable as `f64` (2^53).
const EXACT_LIMIT: f64 = 9_007_199_254_740_992.0;

fn is_integral(v: f64) -> bool {
    v.is_finite() && v.fract() == 0.0 && v.abs() < EXACT_LIMIT
}

/// Serializes an `f64`, integral values as integers.
pub(crate) fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if is_integral(*v) {
        // Exact: the value is integral and within the 2^53 range checked above.
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// The same for `Option<f64>` fields.
pub(crate) mod option {
    use serde::Serializer;

    /// Serializes an `Option<f64>`, integral values as integers.
    pub(crate) fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => super::serialize(v, s),
            None => s.serialize_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    #[derive(Serialize)]
    struct N {
        #[serde(serialize_with = "super::serialize")]
        a: f64,
        #[serde(serialize_with = "super::option::serialize")]
        b: Option<f64>,
    }

    #[test]
    fn integral_values_have_no_fraction() {
        let s = serde_json::to_string(&N { a: 50.0, b: Some(0.5) }).unwrap();
        assert_eq!(s, r#"{"a":50,"b":0.5}"#);
        // Beyond 2^53 integral floats stay floats.
        let v = serde_json::to_value(N { a: 1e300, b: None }).unwrap();
        assert!(v["a"].is_f64());
    }
}
