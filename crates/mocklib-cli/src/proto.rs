//! `mocklib serve --proto`: the `.proto` files compiled into descriptors
//! (with protox, a protobuf compiler in Rust: no `protoc` to install), the
//! gRPC status code names the handler files and the journal use, and the
//! journal's view of a call: its messages as proto3 JSON.

use std::path::PathBuf;

use bytes::Bytes;
use mocklib::grpc::{CallRecord, Code, RecordedMessage};
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor, MethodDescriptor};

use crate::base64::base64;
use crate::stamp::{Watched, stamp};

/// gRPC's code names (as `grpc-status` numbers them, from 0), the names
/// every gRPC implementation and its documentation use.
const CODE_NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// Compiles the `.proto` files at `files`, looking up imports in
/// `includes` (when empty: each file's own folder). Returns the
/// descriptors, and every file read (the given files and what they import
/// from the include folders) with its stamp, for reloading. An error names
/// the file and, when the compiler gives one, the line and column.
pub(crate) fn compile(
    files: &[PathBuf],
    includes: &[PathBuf],
) -> Result<(DescriptorPool, Vec<Watched>), String> {
    // Stamped before they are read, so an edit during the compile is seen
    // on the next poll.
    let mut watched: Vec<Watched> = files.iter().map(|f| (f.clone(), stamp(f))).collect();
    // protox says a missing file "is not in any include path".
    for file in files {
        std::fs::metadata(file).map_err(|error| {
            format!("could not read the .proto file {}: {error}", file.display())
        })?;
    }
    let mut includes = includes.to_vec();
    if includes.is_empty() {
        for file in files {
            let folder = match file.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
                _ => PathBuf::from("."),
            };
            if !includes.contains(&folder) {
                includes.push(folder);
            }
        }
    }
    let mut compiler = protox::Compiler::new(&includes).map_err(|error| describe(&error))?;
    compiler
        .include_imports(true)
        .open_files(files)
        .map_err(|error| describe(&error))?;
    // The imports are known only now; their stamps are taken after the
    // read, so an edit racing this load is missed until the next one
    // (well-known types such as google/protobuf/empty.proto have no path).
    for file in compiler.files().filter(|file| file.is_import()) {
        if let Some(path) = file.path() {
            watched.push((path.to_owned(), stamp(path)));
        }
    }
    Ok((compiler.descriptor_pool(), watched))
}

/// A compile error as `could not compile the .proto files: FILE:LINE:COLUMN:
/// MESSAGE` (the line when the error points at the source).
fn describe(error: &protox::Error) -> String {
    use miette::Diagnostic;
    let position = error
        .labels()
        .and_then(|mut labels| labels.next())
        .and_then(|label| {
            let contents = error.source_code()?.read_span(label.inner(), 0, 0).ok()?;
            Some(format!(
                ":{}:{}",
                contents.line() + 1,
                contents.column() + 1
            ))
        })
        .unwrap_or_default();
    let mut text = match error.file() {
        Some(file) => format!("could not compile the .proto files: {file}{position}: {error}"),
        None => format!("could not compile the .proto files: {error}"),
    };
    // An I/O error's cause (the file is missing, say) is not in its text.
    if let Some(cause) = std::error::Error::source(error) {
        text.push_str(&format!(": {cause}"));
    }
    text
}

/// Connect's JSON form of the methods in `pool`: a call's request and
/// replies converted with the proto3 JSON mapping, so `curl -d '{"name":
/// "Kate"}'` and Connect-ES (JSON by default) reach the `grpc` entries.
#[derive(Clone)]
pub(crate) struct ConnectJson(pub(crate) DescriptorPool);

impl ConnectJson {
    fn method(&self, path: &str) -> Result<MethodDescriptor, String> {
        find_method(Some(&self.0), path)
    }
}

impl mocklib::grpc::JsonCodec for ConnectJson {
    fn request_from_json(&self, method: &str, json: &[u8]) -> Result<Vec<u8>, String> {
        let input = self.method(method)?.input();
        let mut deserializer = serde_json::Deserializer::from_slice(json);
        let message = DynamicMessage::deserialize(input, &mut deserializer)
            .map_err(|error| error.to_string())?;
        deserializer.end().map_err(|error| error.to_string())?;
        Ok(prost::Message::encode_to_vec(&message))
    }

    fn reply_to_json(&self, method: &str, message: &[u8]) -> Result<Vec<u8>, String> {
        let output = self.method(method)?.output();
        let message = DynamicMessage::decode(output, message).map_err(|error| error.to_string())?;
        serde_json::to_vec(&message).map_err(|error| error.to_string())
    }
}

/// The method `name` (`package.Service/Method`, a leading `/` allowed) of
/// the loaded descriptors, or why there is none, listing what there is.
pub(crate) fn find_method(
    pool: Option<&DescriptorPool>,
    name: &str,
) -> Result<MethodDescriptor, String> {
    let trimmed = name.trim_start_matches('/');
    let Some((service_name, method_name)) = trimmed.split_once('/') else {
        return Err(format!(
            "{name:?} is not a gRPC method: write it package.Service/Method"
        ));
    };
    let Some(pool) = pool else {
        return Err(format!(
            "no --proto file was given: a grpc entry needs the .proto file that describes {trimmed}"
        ));
    };
    let Some(service) = pool.get_service_by_name(service_name) else {
        let services: Vec<String> = pool
            .services()
            .map(|service| service.full_name().to_owned())
            .collect();
        return Err(if services.is_empty() {
            format!("no service {service_name} in the .proto files: they define no service")
        } else {
            format!(
                "no service {service_name} in the .proto files (services: {})",
                services.join(", ")
            )
        });
    };
    let found = service
        .methods()
        .find(|method| method.name() == method_name);
    found.ok_or_else(|| {
        let methods: Vec<String> = service
            .methods()
            .map(|method| method.name().to_owned())
            .collect();
        format!(
            "service {service_name} has no method {method_name} (methods: {})",
            methods.join(", ")
        )
    })
}

/// The code named `value`: a name as gRPC writes it (`NOT_FOUND`; any case,
/// `NotFound` too) or its number.
pub(crate) fn parse_code(value: &serde_json::Value) -> Result<Code, String> {
    let unknown = || {
        format!(
            "unknown gRPC status {value} (a code name or number: {})",
            CODE_NAMES.join(", ")
        )
    };
    match value {
        serde_json::Value::Number(number) => number
            .as_i64()
            .and_then(|number| i32::try_from(number).ok())
            .and_then(Code::from_i32)
            .ok_or_else(unknown),
        serde_json::Value::String(name) => {
            let squashed = |name: &str| name.replace('_', "").to_ascii_lowercase();
            let wanted = squashed(name);
            let index = CODE_NAMES
                .iter()
                .position(|known| squashed(known) == wanted)
                .ok_or_else(unknown)?;
            i32::try_from(index)
                .ok()
                .and_then(Code::from_i32)
                .ok_or_else(unknown)
        }
        _ => Err(unknown()),
    }
}

/// The name of `code` (`NOT_FOUND`).
pub(crate) fn code_name(code: Code) -> &'static str {
    usize::try_from(code.as_i32())
        .ok()
        .and_then(|index| CODE_NAMES.get(index))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// The `grpc` object of a journal entry: the method, the messages both
/// ways as proto3 JSON (decoded with the loaded descriptors of the method),
/// and the status (`null` while the call runs).
pub(crate) fn call_json(pool: Option<&DescriptorPool>, call: &CallRecord) -> serde_json::Value {
    let name = call.method().trim_start_matches('/');
    // The descriptors loaded now: after an edit of the .proto files, the
    // calls before it are read with the new ones.
    let method = find_method(pool, name).ok();
    let show = |messages: Vec<RecordedMessage>, descriptor: Option<MessageDescriptor>| {
        messages
            .iter()
            .map(|message| message_json(message.bytes(), descriptor.as_ref()))
            .collect::<Vec<_>>()
    };
    serde_json::json!({
        "method": name,
        "protocol": call.protocol().name(),
        "requests": show(call.requests(), method.as_ref().map(MethodDescriptor::input)),
        "replies": show(call.replies(), method.as_ref().map(MethodDescriptor::output)),
        "requests_received": call.requests_received(),
        "replies_sent": call.replies_sent(),
        "status": call.status().map(|status| serde_json::json!({
            "code": code_name(status.code()),
            "message": status.message(),
        })),
    })
}

/// One message as proto3 JSON; when it cannot be, `{base64, note}`: its
/// bytes and why.
fn message_json(bytes: &Bytes, descriptor: Option<&MessageDescriptor>) -> serde_json::Value {
    let note = match descriptor {
        None => "no loaded .proto file describes this method".to_owned(),
        Some(descriptor) => match DynamicMessage::decode(descriptor.clone(), bytes.clone()) {
            Ok(message) => match serde_json::to_value(&message) {
                Ok(json) => return json,
                Err(error) => format!("no JSON for this {}: {error}", descriptor.full_name()),
            },
            Err(error) => format!("does not decode as {}: {error}", descriptor.full_name()),
        },
    };
    serde_json::json!({ "base64": base64(bytes), "note": note })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GREETER: &str = r#"syntax = "proto3";
package helloworld;
service Greeter {
  rpc SayHello (HelloRequest) returns (HelloReply);
}
message HelloRequest { string name = 1; }
message HelloReply { string message = 1; }
"#;

    fn compiled(source: &str) -> Result<(DescriptorPool, Vec<Watched>), String> {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("helloworld.proto");
        std::fs::write(&file, source).unwrap();
        compile(&[file], &[])
    }

    #[test]
    fn code_names_and_numbers_parse() {
        for (index, name) in CODE_NAMES.iter().enumerate() {
            let code = parse_code(&serde_json::json!(name)).unwrap();
            assert_eq!(code_name(code), *name);
            assert_eq!(parse_code(&serde_json::json!(index)).unwrap(), code);
        }
        assert_eq!(
            parse_code(&serde_json::json!("NotFound")).unwrap(),
            Code::NotFound
        );
        let error = parse_code(&serde_json::json!("NOT_FOND")).unwrap_err();
        assert!(
            error.starts_with("unknown gRPC status \"NOT_FOND\""),
            "{error}"
        );
        assert!(parse_code(&serde_json::json!(17)).is_err());
        assert!(parse_code(&serde_json::json!(true)).is_err());
    }

    #[test]
    fn methods_are_found_or_the_error_lists_what_there_is() {
        let (pool, watched) = compiled(GREETER).unwrap();
        assert_eq!(watched.len(), 1);
        let method = find_method(Some(&pool), "helloworld.Greeter/SayHello").unwrap();
        assert_eq!(method.output().full_name(), "helloworld.HelloReply");
        assert_eq!(
            find_method(Some(&pool), "helloworld.Greeter/SayHi").unwrap_err(),
            "service helloworld.Greeter has no method SayHi (methods: SayHello)"
        );
        assert_eq!(
            find_method(Some(&pool), "Greeter/SayHello").unwrap_err(),
            "no service Greeter in the .proto files (services: helloworld.Greeter)"
        );
        assert!(
            find_method(None, "helloworld.Greeter/SayHello")
                .unwrap_err()
                .starts_with("no --proto file was given")
        );
    }

    #[test]
    fn a_compile_error_names_the_file_and_the_line() {
        let broken = GREETER.replace("string name = 1;", "string name = 1");
        let error = compiled(&broken).unwrap_err();
        assert!(
            error.starts_with("could not compile the .proto files: helloworld.proto:6:"),
            "{error}"
        );
    }
}
