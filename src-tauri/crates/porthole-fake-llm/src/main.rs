//! `porthole-fake-llm --script FILE.json [--port N] [--record FILE.jsonl]`
//!
//! Serves the script until killed. Prints `listening http://127.0.0.1:PORT/v1` once bound
//! and appends every request, as one JSON line, to the `--record` file.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::Parser;
use porthole_fake_llm::{FakeLlm, Script};

#[derive(Parser, Debug)]
#[command(
    name = "porthole-fake-llm",
    about = "Scripted fake LLM server (OpenAI + Anthropic streaming)"
)]
struct Args {
    /// Script file: {"replies": [...], "apiKey"?: "...", "models"?: [...], "chunkDelayMs"?: N}
    #[arg(long)]
    script: PathBuf,
    /// Port on 127.0.0.1 (default: any free port)
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Append each request as a JSON line to this file
    #[arg(long)]
    record: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("porthole-fake-llm: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.script).map_err(|e| format!("reading {}: {e}", args.script.display()))?;
    let script: Script = serde_json::from_str(&text).map_err(|e| format!("parsing {}: {e}", args.script.display()))?;
    let record = match &args.record {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("opening {}: {e}", path.display()))?,
        ),
        None => None,
    };
    let record = Mutex::new(record);
    let server = FakeLlm::start_with_observer(script, args.port, move |request| {
        let mut guard = record.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(file) = guard.as_mut() {
            let line = serde_json::to_string(request).unwrap_or_default();
            if let Err(e) = writeln!(file, "{line}").and_then(|()| file.flush()) {
                eprintln!("porthole-fake-llm: writing the record file: {e}");
            }
        }
    })
    .await
    .map_err(|e| format!("binding 127.0.0.1:{}: {e}", args.port))?;
    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "listening {}", server.base_url()).map_err(|e| e.to_string())?;
        stdout.flush().map_err(|e| e.to_string())?;
    }
    std::future::pending::<()>().await;
    drop(server);
    Ok(())
}
