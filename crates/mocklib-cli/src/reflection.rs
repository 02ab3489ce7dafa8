//! gRPC server reflection for `mocklib serve --proto`: the services of the
//! loaded `.proto` files described to tools such as `grpcurl`, Postman or
//! grpcio's reflection client, as a real server with reflection enabled
//! describes its own.
//!
//! Both versions of the protocol are served (`grpc.reflection.v1` and the
//! older `v1alpha` that most tools still call first): they share their
//! messages. A request names a file, a symbol (a service, method, message
//! or enum) or an extension; the answer carries the file that defines it
//! and every file it imports, encoded `FileDescriptorProto`s, so the tool
//! can build the types without another round trip.

use futures_util::StreamExt;
use mocklib::Handler;
use mocklib::grpc::{self, Messages, ResolverArgs};
use prost_reflect::{DescriptorPool, FileDescriptor};

/// The reflection services, in the order tools try them.
const SERVICES: [&str; 2] = [
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
];

/// The handlers answering reflection requests about `pool`'s services.
pub(crate) fn handlers(pool: &DescriptorPool) -> Vec<Handler> {
    SERVICES
        .iter()
        .map(|service| {
            let pool = pool.clone();
            grpc::bidi_streaming(
                &format!("{service}/ServerReflectionInfo"),
                move |args: ResolverArgs<Messages<Request>>| {
                    let pool = pool.clone();
                    Ok(args
                        .message
                        .map(move |request| request.map(|request| answer(&pool, request))))
                },
            )
        })
        .collect()
}

/// `ServerReflectionRequest` (the same in v1 and v1alpha).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Request {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Asked", tags = "3, 4, 5, 6, 7")]
    asked: Option<Asked>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Asked {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    #[prost(message, tag = "5")]
    FileContainingExtension(ExtensionRequest),
    #[prost(string, tag = "6")]
    AllExtensionNumbersOfType(String),
    #[prost(string, tag = "7")]
    ListServices(String),
}

#[derive(Clone, PartialEq, prost::Message)]
struct ExtensionRequest {
    #[prost(string, tag = "1")]
    containing_type: String,
    #[prost(int32, tag = "2")]
    extension_number: i32,
}

/// `ServerReflectionResponse`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Response {
    #[prost(string, tag = "1")]
    valid_host: String,
    #[prost(message, optional, tag = "2")]
    original_request: Option<Request>,
    #[prost(oneof = "Answer", tags = "4, 5, 6, 7")]
    answer: Option<Answer>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Answer {
    /// `file_descriptor_response`.
    #[prost(message, tag = "4")]
    Files(FileDescriptorResponse),
    /// `all_extension_numbers_response`.
    #[prost(message, tag = "5")]
    ExtensionNumbers(ExtensionNumberResponse),
    /// `list_services_response`.
    #[prost(message, tag = "6")]
    Services(ListServiceResponse),
    /// `error_response`.
    #[prost(message, tag = "7")]
    Error(ErrorResponse),
}

#[derive(Clone, PartialEq, prost::Message)]
struct FileDescriptorResponse {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ExtensionNumberResponse {
    #[prost(string, tag = "1")]
    base_type_name: String,
    #[prost(int32, repeated, tag = "2")]
    extension_number: Vec<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ListServiceResponse {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceResponse {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ErrorResponse {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The answer to one reflection request: what was asked, or an error
/// response saying why not (the stream goes on either way, as gRPC's own
/// reflection service does).
fn answer(pool: &DescriptorPool, request: Request) -> Response {
    let answer = match &request.asked {
        Some(Asked::ListServices(_)) => {
            let mut names: Vec<String> =
                pool.services().map(|s| s.full_name().to_owned()).collect();
            names.extend(SERVICES.iter().map(|&s| s.to_owned()));
            Answer::Services(ListServiceResponse {
                service: names
                    .into_iter()
                    .map(|name| ServiceResponse { name })
                    .collect(),
            })
        }
        Some(Asked::FileByFilename(name)) => match pool.get_file_by_name(name) {
            Some(file) => files(&file),
            None => not_found(format!("no file {name} among the loaded .proto files")),
        },
        Some(Asked::FileContainingSymbol(symbol)) => match file_of_symbol(pool, symbol) {
            Some(file) => files(&file),
            None => not_found(format!("no symbol {symbol} in the loaded .proto files")),
        },
        Some(Asked::FileContainingExtension(asked)) => pool
            .all_extensions()
            .find(|extension| {
                extension.containing_message().full_name() == asked.containing_type
                    && i64::from(extension.number()) == i64::from(asked.extension_number)
            })
            .map_or_else(
                || {
                    not_found(format!(
                        "no extension {} of {} in the loaded .proto files",
                        asked.extension_number, asked.containing_type
                    ))
                },
                |extension| files(&extension.parent_file()),
            ),
        Some(Asked::AllExtensionNumbersOfType(name)) => match pool.get_message_by_name(name) {
            Some(_) => Answer::ExtensionNumbers(ExtensionNumberResponse {
                base_type_name: name.clone(),
                extension_number: pool
                    .all_extensions()
                    .filter(|extension| extension.containing_message().full_name() == name)
                    .filter_map(|extension| i32::try_from(extension.number()).ok())
                    .collect(),
            }),
            None => not_found(format!("no message {name} in the loaded .proto files")),
        },
        None => Answer::Error(ErrorResponse {
            error_code: grpc::Code::InvalidArgument.as_i32(),
            error_message: "a reflection request that asks nothing".to_owned(),
        }),
    };
    Response {
        valid_host: request.host.clone(),
        original_request: Some(request),
        answer: Some(answer),
    }
}

fn not_found(message: String) -> Answer {
    Answer::Error(ErrorResponse {
        error_code: grpc::Code::NotFound.as_i32(),
        error_message: message,
    })
}

/// The file defining `symbol`: a service, a method (`pkg.Service.Method`),
/// a message, an enum or an extension, by its full name.
fn file_of_symbol(pool: &DescriptorPool, symbol: &str) -> Option<FileDescriptor> {
    let symbol = symbol.trim_start_matches('.');
    if let Some(service) = pool.get_service_by_name(symbol) {
        return Some(service.parent_file());
    }
    if let Some((service, method)) = symbol.rsplit_once('.') {
        if let Some(service) = pool.get_service_by_name(service) {
            if service.methods().any(|m| m.name() == method) {
                return Some(service.parent_file());
            }
        }
    }
    pool.get_message_by_name(symbol)
        .map(|message| message.parent_file())
        .or_else(|| pool.get_enum_by_name(symbol).map(|e| e.parent_file()))
        .or_else(|| pool.get_extension_by_name(symbol).map(|e| e.parent_file()))
}

/// `file` and every file it imports, directly or not, each once, `file`
/// first.
fn files(file: &FileDescriptor) -> Answer {
    let mut seen = vec![file.clone()];
    let mut next = 0;
    while let Some(current) = seen.get(next).cloned() {
        for dependency in current.dependencies() {
            if !seen.iter().any(|known| known.name() == dependency.name()) {
                seen.push(dependency);
            }
        }
        next += 1;
    }
    Answer::Files(FileDescriptorResponse {
        file_descriptor_proto: seen.iter().map(FileDescriptor::encode_to_vec).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMON: &str = r#"syntax = "proto3";
package common;
message Name { string value = 1; }
"#;

    const GREETER: &str = r#"syntax = "proto3";
package helloworld;
import "common.proto";
service Greeter {
  rpc SayHello (HelloRequest) returns (HelloReply);
}
message HelloRequest { common.Name name = 1; }
message HelloReply { string message = 1; }
enum Mood { CALM = 0; }
"#;

    fn pool() -> DescriptorPool {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("common.proto"), COMMON).unwrap();
        std::fs::write(dir.path().join("greeter.proto"), GREETER).unwrap();
        let files = protox::compile(["greeter.proto"], [dir.path()]).unwrap();
        DescriptorPool::from_file_descriptor_set(files).unwrap()
    }

    fn ask(asked: Asked) -> Answer {
        let request = Request {
            host: "localhost".into(),
            asked: Some(asked),
        };
        let response = answer(&pool(), request.clone());
        assert_eq!(response.original_request, Some(request));
        assert_eq!(response.valid_host, "localhost");
        response.answer.unwrap()
    }

    /// The names of the files of a file descriptor response.
    fn names(answer: Answer) -> Vec<String> {
        let Answer::Files(files) = answer else {
            panic!("not files: {answer:?}");
        };
        files
            .file_descriptor_proto
            .iter()
            .map(|bytes| {
                <prost_types::FileDescriptorProto as prost::Message>::decode(&bytes[..])
                    .unwrap()
                    .name
                    .unwrap()
            })
            .collect()
    }

    #[test]
    fn services_are_listed_with_reflection_itself() {
        let Answer::Services(list) = ask(Asked::ListServices(String::new())) else {
            panic!("not a list");
        };
        let names: Vec<_> = list.service.into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "helloworld.Greeter",
                "grpc.reflection.v1.ServerReflection",
                "grpc.reflection.v1alpha.ServerReflection"
            ]
        );
    }

    #[test]
    fn a_symbol_or_file_comes_with_every_file_it_imports() {
        for symbol in [
            "helloworld.Greeter",
            "helloworld.Greeter.SayHello",
            "helloworld.HelloReply",
            ".helloworld.Mood",
        ] {
            assert_eq!(
                names(ask(Asked::FileContainingSymbol(symbol.into()))),
                ["greeter.proto", "common.proto"],
                "{symbol}"
            );
        }
        assert_eq!(
            names(ask(Asked::FileByFilename("common.proto".into()))),
            ["common.proto"]
        );
    }

    #[test]
    fn what_is_not_there_is_not_found_and_says_what() {
        for asked in [
            Asked::FileContainingSymbol("helloworld.Greeter.SayGoodbye".into()),
            Asked::FileByFilename("missing.proto".into()),
            Asked::AllExtensionNumbersOfType("helloworld.Nope".into()),
            Asked::FileContainingExtension(ExtensionRequest {
                containing_type: "helloworld.HelloRequest".into(),
                extension_number: 100,
            }),
        ] {
            let Answer::Error(error) = ask(asked.clone()) else {
                panic!("not an error: {asked:?}");
            };
            assert_eq!(error.error_code, grpc::Code::NotFound.as_i32(), "{asked:?}");
            assert!(
                error.error_message.starts_with("no "),
                "{}",
                error.error_message
            );
        }
        let Answer::ExtensionNumbers(numbers) = ask(Asked::AllExtensionNumbersOfType(
            "helloworld.HelloRequest".into(),
        )) else {
            panic!("not numbers");
        };
        assert!(numbers.extension_number.is_empty());
    }
}
