//! The shared table of shaping cases (`tests/shaping_cases.json`, also read by the Python,
//! Node and C behaviour tests), and the edges the table does not show.

use super::*;
use crate::server::input_schema;

const CASES: &str = include_str!("../../../../tests/shaping_cases.json");

/// The result as the table writes it: without `resultType`, `_meta` and caching hints.
fn bare(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for k in ["resultType", "_meta", "ttlMs", "cacheScope"] {
            m.remove(k);
        }
    }
    v
}

fn shape(case: &Value) -> Result<Value> {
    let returned = Returned::from_tagged(case["returned"].clone())?;
    let v = match case["kind"].as_str() {
        Some("tool") => {
            let schema = case.get("outputSchema").map(|s| input_schema::compile(s).unwrap());
            serde_json::to_value(tool_result(returned, schema.as_ref())?)
        }
        Some("resource") => serde_json::to_value(resource_result(
            returned,
            case["uri"].as_str().unwrap(),
            case.get("mimeType").and_then(Value::as_str),
        )?),
        Some("prompt") => serde_json::to_value(prompt_result(returned)?),
        Some("completion") => serde_json::to_value(completion_result(returned)?),
        other => panic!("unknown kind {other:?}"),
    };
    Ok(bare(v.unwrap()))
}

#[test]
fn every_case_of_the_shared_table_gives_its_result() {
    let doc: Value = serde_json::from_str(CASES).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for case in cases {
        let got = shape(case).unwrap_or_else(|e| panic!("{}: {e}", case["name"]));
        assert_eq!(got, case["expected"], "{}", case["name"]);
    }
}

#[test]
fn typed_results_are_full_results() {
    let r = tool_result(CallToolResult::text("t").into(), None).unwrap();
    assert_eq!(r, CallToolResult::text("t"));
    let r = resource_result(ReadResourceResult::default().into(), "x://", Some("text/plain")).unwrap();
    assert!(r.contents.is_empty());
}

#[test]
fn sniffed_signatures() {
    let kinds = |b: &[u8]| {
        let v = sniff(b);
        (v["type"].as_str().unwrap().to_owned(), v["mimeType"].as_str().map(str::to_owned))
    };
    assert_eq!(kinds(b"\xff\xd8\xff\xe0"), ("image".into(), Some("image/jpeg".into())));
    assert_eq!(kinds(b"RIFF\0\0\0\0WEBPVP8 "), ("image".into(), Some("image/webp".into())));
    assert_eq!(kinds(b"RIFF\0\0\0\0WAVEfmt "), ("audio".into(), Some("audio/wav".into())));
    assert_eq!(kinds(b"RIFF"), ("resource".into(), None));
}

#[test]
fn bytes_inside_data_become_base64_text() {
    let r = Returned::object(vec![("b".into(), Returned::Bytes(vec![0, 1]))]);
    let v = serde_json::to_value(tool_result(r, None).unwrap()).unwrap();
    assert_eq!(v["structuredContent"], json!({ "b": "AAE=" }));
}

#[test]
fn a_full_result_with_bytes_in_its_content_sniffs_them() {
    let png = b"\x89PNG\r\n\x1a\n".to_vec();
    let r = Returned::object(vec![("content".into(), Returned::List(vec![Returned::Bytes(png)]))]);
    let v = serde_json::to_value(tool_result(r, None).unwrap()).unwrap();
    assert_eq!(v["content"][0]["type"], "image");
}

#[test]
fn a_wrong_shape_is_an_internal_error_naming_the_handler() {
    let e = prompt_result(Returned::Json(json!({ "messages": [{ "role": "robot", "content": "x" }] }))).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Internal);
    assert!(e.message().contains("the prompt returned a result of the wrong shape"), "{}", e.message());
}

#[test]
fn tagged_forms_are_checked() {
    assert!(Returned::from_tagged(json!({ "bytes": "not base64!" })).is_err());
    assert!(Returned::from_tagged(json!({ "json": 1, "bytes": "" })).is_err());
    assert!(Returned::from_tagged(json!([1])).is_err());
    assert_eq!(Returned::from_tagged(json!({ "list": [{ "json": 1 }] })).unwrap(), Returned::Json(json!([1])));
}

#[test]
fn a_completion_handler_total_is_kept_when_capped() {
    let values: Vec<Value> = (0..120).map(|i| json!(i)).collect();
    let r = completion_result(Returned::Json(json!({ "values": values, "total": 500 }))).unwrap();
    assert_eq!(r.completion.values.len(), MAX_COMPLETION_VALUES);
    assert_eq!((r.completion.total, r.completion.has_more), (Some(500), Some(true)));
    assert_eq!(r.completion.values[7], "7");
}
