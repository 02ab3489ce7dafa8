//! Command-line flags as every `mocklib` command takes them: `--flag value`
//! and `--flag=value` alike.

/// The arguments of a command, read flag by flag.
pub(crate) struct Args<'a> {
    rest: std::slice::Iter<'a, String>,
}

/// One flag, and the way to its value.
pub(crate) struct Flag<'a, 'r> {
    /// `--har` of `--har=FILE` and of `--har FILE`.
    pub(crate) name: &'a str,
    inline: Option<&'a str>,
    rest: &'r mut std::slice::Iter<'a, String>,
}

impl<'a> Args<'a> {
    pub(crate) fn new(args: &'a [String]) -> Self {
        Args { rest: args.iter() }
    }

    /// The next flag (or stray argument: its name is the whole of it).
    pub(crate) fn next_flag(&mut self) -> Option<Flag<'a, '_>> {
        let arg = self.rest.next()?;
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg.as_str(), None),
        };
        Some(Flag {
            name,
            inline,
            rest: &mut self.rest,
        })
    }
}

impl Flag<'_, '_> {
    /// The text after `=`, or else the next argument.
    pub(crate) fn value(&mut self) -> Result<String, String> {
        match self.inline {
            Some(value) => Ok(value.to_owned()),
            None => self
                .rest
                .next()
                .cloned()
                .ok_or_else(|| format!("{} needs a value", self.name)),
        }
    }
}

/// The options `parse` made of a command's arguments, or the exit to take:
/// 0 after printing the usage for `--help` (`Ok(None)`), 2 after printing
/// the error and the usage to standard error.
pub(crate) fn options_or_exit<T>(
    command: &str,
    usage: &str,
    parsed: Result<Option<T>, String>,
) -> Result<T, std::process::ExitCode> {
    match parsed {
        Ok(Some(options)) => Ok(options),
        Ok(None) => {
            println!("{usage}");
            Err(std::process::ExitCode::SUCCESS)
        }
        Err(error) => {
            eprintln!("mocklib {command}: {error}\n\n{usage}");
            Err(std::process::ExitCode::from(2))
        }
    }
}
