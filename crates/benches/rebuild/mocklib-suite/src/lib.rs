//! Empty: the tests call the mocked API with reqwest directly, so the build
//! measures what the mock library costs a test crate and nothing else.
