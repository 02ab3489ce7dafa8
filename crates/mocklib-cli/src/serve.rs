//! `mocklib serve`: the loopback listener (base URL, HTTP proxy, HTTPS
//! through `CONNECT`) answering from handler files, HAR files and OpenAPI
//! documents — gRPC too, from `.proto` files — for test suites written in
//! any language.
//!
//! Once listening it prints `KEY=VALUE` lines (the base URL, the proxy URL,
//! the CA file, then `server.env()`) and an empty line, and serves until
//! SIGINT or SIGTERM (or, with `--until-stdin-closes`, until its standard
//! input closes: a harness that dies takes the server with it). Changed
//! files are reloaded; a broken edit keeps the previous handlers.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mocklib::har::{RecordMode, Recording};
use mocklib::node::{Server, setup_server};
use mocklib::{Handler, ListenOptions, UnhandledRequest};
use prost_reflect::DescriptorPool;
use url::Url;

use crate::handler_file;
use crate::lock::lock;
use crate::proto;
use crate::stamp::{Watched, stamp};

pub(crate) const USAGE: &str = "usage: mocklib serve [options]

Starts a mock server on 127.0.0.1 that is also an HTTP(S) proxy, answering
from the files given, and prints the environment a child process needs.

Options (each file option may be repeated; earlier files win):
  --handlers FILE        a YAML (.yaml, .yml) or JSON list of handlers:
                           - method: GET          (optional: ALL, any method)
                             path: /users/:id     (a mocklib pattern or URL)
                             status: 200          (optional: 200)
                             headers: {x-total-count: \"1\"}
                             json: {id: 1}        (or body: TEXT, or
                                                   body_file: PATH)
                             delay_ms: 100        (optional)
                             match:               (optional: all must hold)
                               headers: {x-api-key: secret}
                               headers_matching: {accept: ^application/}
                               headers_absent: [x-debug]
                               query: {page: \"2\"}    cookies: {session: abc}
                               json: {role: admin}  (the body holds it)
                               json_path: {$.user.id: 7}
                               form: {name: Kate}   body_contains: TEXT
                               bearer: TOKEN  basic: {user: U, password: P}
                             sequence:            (in place of one answer: one
                               - {status: 202}      per request, in order; the
                               - {json: {ok: 1}}    last repeats)
                             times: 2             (optional: the requests it
                                                   expects; or {at_least: 1},
                                                   {at_most: 3}; see verify)
                             once: true           (answer once, a sequence each
                                                   answer once; then the next
                                                   entry takes the requests)
                             template: true       (optional: body, json strings,
                                                   header values and status
                                                   are Jinja2 templates of
                                                   request.params, .query,
                                                   .headers, .cookies, .json,
                                                   .body; now(), uuid(),
                                                   random(min, max))
                         stateful REST resources (list, get, create,
                         replace, patch, delete; 404/409/400 as an API
                         answers; one collection per server, started over
                         from the seed when the files are reloaded):
                           - resource: /users     (a mocklib pattern or URL)
                             id_field: id         (optional: id)
                             seed: [{id: 1, name: Kate}]  (optional; or
                                                   seed_file: PATH, a JSON
                                                   or YAML list)
                             match: {bearer: t0ken}  (optional)
                         and gRPC methods of the --proto files:
                           - grpc: helloworld.Greeter/SayHello
                             json: {message: Hi}  (the reply, proto3 JSON;
                                                   a list: one reply each,
                                                   for a streaming method)
                             status: NOT_FOUND    (optional: OK; a gRPC code
                                                   name or number)
                             message: TEXT        (optional: the status's)
                             delay_ms: 100        (optional)
                         and functions of the test's own language, called
                         over the callback channel its client holds open
                         (a WebSocket at /__mocklib/callbacks):
                           - path: /users/:id     (optional: any URL; method
                                                   and match as above)
                             callback: user_by_id (the function's name)
                             timeout_ms: 5000     (optional: then 504)
  --contract FILE        an OpenAPI document every answer is checked
                         against (the request, the status, the content
                         type, headers and JSON body): findings are logged,
                         in the journal (`contract_findings`) and fail
                         verify
  --contract-strict      an answer that breaks a contract is a 500 whose
                         body lists what differs
  --graphql-contract FILE
                         a GraphQL schema (SDL) the GraphQL requests to
                         --graphql-endpoint and their answers are checked
                         against (unknown fields, argument types, missing
                         or unselected fields in data…); findings as for
                         --contract, and --contract-strict applies
  --graphql-endpoint URL where --graphql-contract applies (default
                         /graphql, on MOCKLIB_URL; an absolute URL or a
                         pattern as for a handler's path)
  --proto FILE           a .proto file whose services the grpc entries
                         answer (h2c on MOCKLIB_URL, and through the proxy),
                         described by server reflection
  --proto-path DIR       a folder where imports are looked up (default:
                         each --proto file's folder)
  --har FILE             replay the exchanges of a HAR file (after the
                         handler files' handlers)
  --openapi FILE         answer every operation of an OpenAPI 3.0/3.1
                         document, YAML or JSON, with its examples (after the
                         HAR files'; `Prefer: code=404` picks a response,
                         `Prefer: dynamic=true, seed=42` generates one); a
                         request without the credentials `security` asks
                         for gets 401
  --openapi-dynamic      the --openapi documents answer with values
                         generated per request (Prism's --dynamic;
                         `Prefer: dynamic=false` for the static answer)
  --record FILE          record requests performed for real into a HAR file
  --record-mode MODE     once (default: record when FILE is missing, else
                         replay it), new_episodes, none, all
  --port N               listen on this port (default: a free one)
  --ca-out PATH          write the CA certificate (PEM) that signs the HTTPS
                         answers to PATH
  --env-out PATH         also write the printed variables to PATH, shell-quoted
                         (set -a; . PATH; set +a)
  --unhandled STRATEGY   warn (default), error, bypass: what happens to a
                         request no handler answers
  --journal-capacity N   how many requests the journal keeps, per scope
                         (default 1000, the oldest dropped first); 0 keeps
                         none (expected counts still hold; a load test
                         that needs no journal)
  --chaos FILE           faults on a share of the requests and latency for
                         every handler of the files and the admin API
                         (YAML: fault_rate, fault, latency, seed); the seed
                         is printed on standard error
  --chaos-seed N         the seed of --chaos (replays a run that printed it)
  --until-stdin-closes   stop when standard input closes, not only on
                         SIGINT/SIGTERM

Prints KEY=VALUE lines once listening, then an empty line:
  MOCKLIB_URL            the base URL (a relative path such as /users/:id
                         matches there, and on every host through the proxy)
  MOCKLIB_PROXY_URL      the same listener as a proxy
  MOCKLIB_CA_FILE        the CA certificate, with --ca-out
  HTTP_PROXY, HTTPS_PROXY, SSL_CERT_FILE, REQUESTS_CA_BUNDLE, ... (the
  proxy and a CA bundle for curl, Python, Node, Go, Java, wget, git)

The admin API, under MOCKLIB_URL/__mocklib/ (GET openapi.json describes it):
  requests               GET: the requests received as JSON (a gRPC call's
                         messages and status in its `grpc` object), filtered
                         by ?method=GET&url=/users/:id (a mocklib pattern),
                         ?handler=TEXT, ?unhandled=true; DELETE clears them
  handlers               POST: add entries (the handler-file format; YAML
                         when the content type says yaml) ahead of the
                         files'; PUT: the whole list instead; GET: list;
                         DELETE: back to the files' (handlers/INDEX: one)
  verify                 200 when every entry's `times` is met, else 422
                         with the report and the counts as data
  scopes                 POST: open a scope (its own handlers, journal and
                         expectations; a port and a proxy credential; the
                         env its processes need); GET: list; scopes/ID:
                         GET, DELETE (its port, credential and the
                         connections its clients keep end at once);
                         scopes/ID/RESOURCE or the scope's own
                         URL/__mocklib/RESOURCE: the resources above in it;
                         .../hold: a request that ends the scope when it ends
  record                 POST {\"path\": FILE, \"mode\": MODE}: record; DELETE: stop
  --admin-token TOKEN    every admin request needs Authorization: Bearer
                         TOKEN (default: $MOCKLIB_ADMIN_TOKEN)
  --scope-idle-timeout S end a scope nobody holds or asks about for S
                         seconds (default 600)
Handler, body, HAR, OpenAPI and .proto files are reloaded when they change.";

/// How often the files are checked for changes.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Default)]
struct Options {
    handler_files: Vec<PathBuf>,
    proto_files: Vec<PathBuf>,
    proto_paths: Vec<PathBuf>,
    har_files: Vec<PathBuf>,
    openapi_files: Vec<PathBuf>,
    /// `--openapi-dynamic`: every answer of the documents dynamic.
    openapi_dynamic: bool,
    record: Option<PathBuf>,
    record_mode: RecordMode,
    port: Option<u16>,
    ca_out: Option<PathBuf>,
    env_out: Option<PathBuf>,
    unhandled: UnhandledRequest,
    until_stdin_closes: bool,
    /// `--journal-capacity`: requests the journal keeps per scope.
    journal_capacity: Option<usize>,
    /// `--contract`: OpenAPI documents every answer is checked against.
    contracts: Vec<PathBuf>,
    /// `--contract-strict`: an answer that breaks one is a 500.
    contract_strict: bool,
    /// `--graphql-contract`: GraphQL schemas (SDL) checked at
    /// `graphql_endpoint`.
    graphql_contracts: Vec<PathBuf>,
    /// `--graphql-endpoint` (default `/graphql`).
    graphql_endpoint: Option<String>,
    /// `--admin-token`, else `MOCKLIB_ADMIN_TOKEN`.
    admin_token: Option<String>,
    /// `--scope-idle-timeout` (default [`SCOPE_IDLE_TIMEOUT`]).
    scope_idle_timeout: Option<Duration>,
    /// `--chaos FILE`, `--chaos-seed N`.
    chaos: Option<PathBuf>,
    chaos_seed: Option<u64>,
}

/// How long a scope nobody holds or asks about lives.
const SCOPE_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Runs `mocklib serve` with the arguments after `serve`.
pub(crate) fn main(args: &[String]) -> ExitCode {
    let options = match crate::args::options_or_exit("serve", USAGE, parse(args)) {
        Ok(options) => options,
        Err(exit) => return exit,
    };
    match serve(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mocklib serve: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The options, or `None` for `--help`.
fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    let mut args = crate::args::Args::new(args);
    while let Some(mut flag) = args.next_flag() {
        let name = flag.name;
        let mut value = || flag.value();
        match name {
            "--help" | "-h" => return Ok(None),
            "--handlers" => options.handler_files.push(value()?.into()),
            "--proto" => options.proto_files.push(value()?.into()),
            "--proto-path" => options.proto_paths.push(value()?.into()),
            "--har" => options.har_files.push(value()?.into()),
            "--openapi" => options.openapi_files.push(value()?.into()),
            "--openapi-dynamic" => options.openapi_dynamic = true,
            "--record" => options.record = Some(value()?.into()),
            "--record-mode" => {
                options.record_mode = crate::admin::parse_record_mode(&value()?)?;
            }
            "--port" => {
                let port = value()?;
                options.port = Some(port.parse().map_err(|_| format!("invalid port {port:?}"))?);
            }
            "--ca-out" => options.ca_out = Some(value()?.into()),
            "--env-out" => options.env_out = Some(value()?.into()),
            "--unhandled" => {
                options.unhandled = match value()?.as_str() {
                    "warn" => UnhandledRequest::Warn,
                    "error" => UnhandledRequest::Error,
                    "bypass" => UnhandledRequest::Bypass,
                    other => {
                        return Err(format!(
                            "unknown strategy {other:?} for --unhandled (warn, error, bypass)"
                        ));
                    }
                }
            }
            "--until-stdin-closes" => options.until_stdin_closes = true,
            "--journal-capacity" => {
                let requests = value()?;
                options.journal_capacity = Some(requests.parse().map_err(|_| {
                    format!("invalid --journal-capacity {requests:?} (a number of requests; 0 keeps none)")
                })?);
            }
            "--admin-token" => options.admin_token = Some(value()?),
            "--contract" => options.contracts.push(value()?.into()),
            "--contract-strict" => options.contract_strict = true,
            "--graphql-contract" => options.graphql_contracts.push(value()?.into()),
            "--graphql-endpoint" => options.graphql_endpoint = Some(value()?),
            "--chaos" => options.chaos = Some(value()?.into()),
            "--chaos-seed" => {
                let seed = value()?;
                options.chaos_seed = Some(
                    seed.parse()
                        .map_err(|_| format!("invalid --chaos-seed {seed:?} (a whole number)"))?,
                );
            }
            "--scope-idle-timeout" => {
                let seconds = value()?;
                let seconds: u64 = seconds
                    .parse()
                    .map_err(|_| format!("invalid --scope-idle-timeout {seconds:?} (seconds)"))?;
                options.scope_idle_timeout = Some(Duration::from_secs(seconds));
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if options.chaos.is_none() && options.chaos_seed.is_some() {
        return Err("--chaos-seed needs --chaos FILE".to_owned());
    }
    if options.record.is_none() && options.record_mode != RecordMode::Once {
        return Err("--record-mode needs --record FILE".to_owned());
    }
    if options.proto_files.is_empty() && !options.proto_paths.is_empty() {
        return Err("--proto-path needs --proto FILE".to_owned());
    }
    if options.contract_strict
        && options.contracts.is_empty()
        && options.graphql_contracts.is_empty()
    {
        return Err(
            "--contract-strict needs --contract FILE or --graphql-contract FILE".to_owned(),
        );
    }
    if options.graphql_endpoint.is_some() && options.graphql_contracts.is_empty() {
        return Err("--graphql-endpoint needs --graphql-contract FILE".to_owned());
    }
    if options.admin_token.is_none() {
        options.admin_token = std::env::var("MOCKLIB_ADMIN_TOKEN")
            .ok()
            .filter(|token| !token.is_empty());
    }
    Ok(Some(options))
}

fn serve(options: &Options) -> Result<(), String> {
    let server = setup_server([]);
    let mut listen = ListenOptions::new().on_unhandled_request(options.unhandled.clone());
    if let Some(port) = options.port {
        listen = listen.port(port);
    }
    if let Some(requests) = options.journal_capacity {
        listen = listen.journal_capacity(requests);
    }
    server
        .try_listen_with(listen)
        .map_err(|error| format!("could not start listening: {error}"))?;
    let base_url = server.url();
    let chaos = match &options.chaos {
        Some(path) => {
            let chaos = crate::chaos_spec::load(path, options.chaos_seed)?;
            eprintln!(
                "mocklib serve: chaos seed {} (replay this run with --chaos-seed {})",
                chaos.seed(),
                chaos.seed()
            );
            Some(chaos)
        }
        None => None,
    };
    let pool = crate::admin::SharedPool::default();
    let scopes = crate::admin::SharedScopes::default();
    let callbacks = crate::callback_entry::Callbacks::new(server.clone());
    lock(&scopes).callbacks = Some(callbacks.clone());
    let show = {
        let pool = Arc::clone(&pool);
        move |entry: &_| crate::admin::journal_entry(entry, lock(&pool).as_ref())
    };
    let contracts = options
        .contracts
        .iter()
        .map(|path| {
            mocklib::openapi::OpenApi::from_path(path)
                .and_then(|document| document.contract())
                .map_err(|error| format!("--contract {}: {error}", path.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let endpoint = options.graphql_endpoint.as_deref().unwrap_or("/graphql");
    let graphql_contracts = options
        .graphql_contracts
        .iter()
        .map(|path| {
            let sdl = std::fs::read_to_string(path).map_err(|error| error.to_string());
            sdl.and_then(|sdl| {
                let schema = mocklib::graphql::Schema::from_sdl(&sdl);
                let contract = schema.and_then(|schema| schema.contract(endpoint));
                contract.map_err(|error| error.to_string())
            })
            .map(|contract| contract.named(format!("GraphQL {}", path.display())))
            .map_err(|error| format!("--graphql-contract {}: {error}", path.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let admin =
        crate::admin::Admin {
            server: server.clone(),
            base_url: base_url.clone(),
            pool: Arc::clone(&pool),
            dir: std::env::current_dir().unwrap_or_default(),
            scopes: Arc::clone(&scopes),
            callbacks: callbacks.clone(),
            chaos: chaos.clone(),
            token: options.admin_token.clone(),
            page: crate::admin::Page::new(&server, Box::new(show)),
            // Clones: the same contracts, counting what the server checks.
            contracts: contracts
                .iter()
                .map(|contract| Arc::new(contract.clone()) as Arc<dyn mocklib::contract::Contract>)
                .chain(graphql_contracts.iter().map(|contract| {
                    Arc::new(contract.clone()) as Arc<dyn mocklib::contract::Contract>
                }))
                .collect(),
        };
    let mut endpoints = admin.into_handlers();
    endpoints.push(crate::admin::page_redirect(&base_url).skip_journal());
    lock(&scopes).endpoints = endpoints;
    let mut sources = Sources {
        options,
        scopes,
        pool,
        callbacks,
        chaos,
        watched: Vec::new(),
        settling: None,
    };
    let files = sources.load()?;
    {
        let mut scopes = lock(&sources.scopes);
        scopes.rebase(&server, &scopes.root, files.clone());
        scopes.files = files;
    }
    for contract in &contracts {
        if options.contract_strict {
            server.attach_contract_strict(contract.clone());
        } else {
            server.attach_contract(contract.clone());
        }
    }
    for contract in graphql_contracts {
        if options.contract_strict {
            server.attach_contract_strict(contract);
        } else {
            server.attach_contract(contract);
        }
    }
    if let Some(path) = &options.record {
        // After the file handlers: `record` appends what it replays, so
        // handlers written by hand win.
        server
            .record(Recording::new(path).mode(options.record_mode))
            .map_err(|error| error.to_string())?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("could not start a runtime: {error}"))?;
    let stop = {
        let _entered = runtime.enter();
        stop_signal()?
    };
    announce(&server, options, base_url)?;

    let idle = options.scope_idle_timeout.unwrap_or(SCOPE_IDLE_TIMEOUT);
    runtime.block_on(wait(options.until_stdin_closes, stop, || {
        sources.reload_if_changed(&server);
        let ended = lock(&sources.scopes).expire(std::time::Instant::now(), idle);
        for id in ended {
            eprintln!(
                "mocklib serve: scope {id} ended: idle for {}s",
                idle.as_secs()
            );
        }
    }));
    server.close();
    Ok(())
}

/// Prints the variables a child process needs (and writes the CA and env
/// files asked for): `KEY=VALUE` lines, then an empty line.
fn announce(server: &Server, options: &Options, base_url: Url) -> Result<(), String> {
    // Without the root's slash, so `$MOCKLIB_URL/users` reads right.
    let origin = |url: Url| url.as_str().trim_end_matches('/').to_owned();
    let mut variables = vec![
        ("MOCKLIB_URL".to_owned(), origin(base_url)),
        ("MOCKLIB_PROXY_URL".to_owned(), origin(server.proxy_url())),
    ];
    if let Some(path) = &options.ca_out {
        write_atomically(path, server.ca_certificate_pem().as_bytes())?;
        // Absolute, for a child started in another folder.
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        variables.push(("MOCKLIB_CA_FILE".to_owned(), path.display().to_string()));
    }
    variables.extend(server.env());
    if let Some(path) = &options.env_out {
        let text: String = variables
            .iter()
            .map(|(name, value)| format!("{name}={}\n", shell_quote(value)))
            .collect();
        write_atomically(path, text.as_bytes())?;
    }
    let mut stdout = std::io::stdout().lock();
    for (name, value) in &variables {
        let _ = writeln!(stdout, "{name}={value}");
    }
    // The empty line ends the block: a harness reads up to it.
    let _ = writeln!(stdout);
    let _ = stdout.flush();
    drop(stdout);
    Ok(())
}

/// The handler list's sources and what was last loaded from them.
struct Sources<'a> {
    options: &'a Options,
    /// The lists the files' handlers go into: the server's own and every
    /// scope's (`admin`).
    scopes: crate::admin::SharedScopes,
    /// The descriptors of the `--proto` files last loaded, shared with the
    /// journal, which decodes the calls' messages with them.
    pool: crate::admin::SharedPool,
    /// What the files' `callback` entries call through.
    callbacks: crate::callback_entry::Callbacks,
    /// `--chaos`: around the files' handlers.
    chaos: Option<mocklib::chaos::Chaos>,
    /// Every file read, with its stamp from before it was read.
    watched: Vec<Watched>,
    /// The stamps a change was first seen with: the files are loaded once
    /// they have stayed so for a whole poll.
    settling: Option<Vec<Watched>>,
}

impl Sources<'_> {
    /// The handler files' handlers, then the HAR files', then the OpenAPI
    /// documents'. The `.proto` files are compiled first: the handler
    /// files' `grpc` entries are checked against them.
    fn load(&mut self) -> Result<Vec<Handler>, String> {
        let mut handlers = Vec::new();
        let mut files = Vec::new();
        let pool = if self.options.proto_files.is_empty() {
            None
        } else {
            let (pool, read) =
                proto::compile(&self.options.proto_files, &self.options.proto_paths)?;
            files.extend(read);
            Some(pool)
        };
        for path in &self.options.handler_files {
            let (loaded, read) = handler_file::load(path, pool.as_ref(), &self.callbacks)?;
            handlers.extend(self.chaotic(loaded));
            files.extend(read);
        }
        // gRPC server reflection: after the handler files' handlers, so an
        // entry for a reflection method wins, and before the HAR files'.
        // No chaos: it describes the mocks, it is none of them.
        if let Some(pool) = &pool {
            handlers.extend(crate::reflection::handlers(pool));
        }
        for path in &self.options.har_files {
            files.push((path.clone(), stamp(path)));
            let loaded = mocklib::har::handlers(path).map_err(|error| error.to_string())?;
            handlers.extend(self.chaotic(loaded));
        }
        for path in &self.options.openapi_files {
            files.push((path.clone(), stamp(path)));
            let mut document =
                mocklib::openapi::OpenApi::from_path(path).map_err(|error| error.to_string())?;
            if self.options.openapi_dynamic {
                document = document.dynamic();
            }
            let loaded = document.handlers().map_err(|error| error.to_string())?;
            handlers.extend(self.chaotic(loaded));
        }
        self.watched = files;
        // Only a load that worked replaces them, as it replaces the handlers.
        *lock(&self.pool) = pool;
        Ok(handlers)
    }

    /// `handlers` under `--chaos`, if given.
    fn chaotic(&self, handlers: Vec<Handler>) -> Vec<Handler> {
        match &self.chaos {
            Some(chaos) => chaos.around(handlers),
            None => handlers,
        }
    }

    /// Whether every file the last load read still has the stamp it had
    /// before it was read.
    fn unchanged_since_read(&self) -> bool {
        self.watched
            .iter()
            .all(|(path, before)| stamp(path) == *before)
    }

    fn current_pool(&self) -> Option<DescriptorPool> {
        lock(&self.pool).clone()
    }

    /// Loads again when a watched file changed, and swaps the handlers;
    /// when the new files are broken, says why and keeps the old handlers
    /// (until the files change again).
    fn reload_if_changed(&mut self, server: &Server) {
        let now: Vec<Watched> = self
            .watched
            .iter()
            .map(|(path, _)| (path.clone(), stamp(path)))
            .collect();
        if now == self.watched {
            self.settling = None;
            return;
        }
        // An editor may write a file in several pieces: read it only once
        // it has stayed the same for a whole poll, never half-way through.
        if self.settling.as_ref() != Some(&now) {
            self.settling = Some(now);
            return;
        }
        self.settling = None;
        let (pool, watched) = (self.current_pool(), self.watched.clone());
        match self.load() {
            // A write landed while the files were read: what was read may
            // mix two versions. Keep the handlers; the next polls see the
            // change and load it once it has settled.
            Ok(_) if !self.unchanged_since_read() => {
                *lock(&self.pool) = pool;
                self.watched = watched;
            }
            Ok(files) => {
                eprintln!("mocklib serve: reloaded ({} handlers)", files.len());
                lock(&self.scopes).reload(server, files);
            }
            Err(error) => {
                eprintln!("mocklib serve: {error}; keeping the previous handlers");
                // The stamps from before this load: the error prints once,
                // and a write that lands during the load is seen next time.
                self.watched = now;
            }
        }
    }
}

/// Checks the files every [`POLL`] until `stop` completes or, when asked,
/// standard input ends.
async fn wait(
    until_stdin_closes: bool,
    stop: impl std::future::Future<Output = ()>,
    mut tick: impl FnMut(),
) {
    let stdin_closed = async move {
        if !until_stdin_closes {
            return std::future::pending().await;
        }
        let (closed, receiver) = tokio::sync::oneshot::channel::<()>();
        // A blocked read keeps this thread; the process ends anyway.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
            let _ = closed.send(());
        });
        let _ = receiver.await;
    };
    tokio::pin!(stdin_closed, stop);
    let mut interval = tokio::time::interval(POLL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = &mut stop => return,
            () = &mut stdin_closed => return,
            _ = interval.tick() => tick(),
        }
    }
}

/// Completes on SIGINT or SIGTERM (what `kill`, test harnesses and
/// container runtimes send). The handlers are installed by this call, so
/// call it before telling anyone the server is up: a signal sent right
/// after that must not kill the process before `close` cleans up.
#[cfg(unix)]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    use tokio::signal::unix::{SignalKind, signal};
    let watch = |kind: SignalKind| {
        signal(kind).map_err(|error| format!("could not watch signal {kind:?}: {error}"))
    };
    let (mut interrupt, mut terminate) = (
        watch(SignalKind::interrupt())?,
        watch(SignalKind::terminate())?,
    );
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Completes on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> Result<impl std::future::Future<Output = ()>, String> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// `value` in single quotes for a POSIX shell.
fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Writes `path` whole or not at all, so a harness waiting for it never
/// reads half a file.
fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), String> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    std::fs::write(&temporary, contents)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|error| format!("could not write {}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
