//! The scheme settings as flags: one `--NAME` flag for every identity field and option that a
//! registered scheme declares, added to `gen` and `serve` at start-up, so a scheme with a new
//! field or option needs no edit here.

use clap::{Arg, ArgMatches, Command};
use idkit_all::registry::{self, Options};

/// The subcommands that make ids, and take every scheme setting.
const TAKE_SETTINGS: [&str; 2] = ["gen", "serve"];
/// The subcommands that read or compose ids: identity fields, and the options that change
/// how ids are read ([`OptionSpec::reads`](idkit_all::registry::OptionSpec::reads): a TSID's
/// node bits, a TypeID's prefix), not those only a generator uses (a rollback policy).
const TAKE_READING: [&str; 2] = ["bounds", "compose"];
/// The subcommands that take identity fields only.
const TAKE_IDENTITY: [&str; 1] = ["sql"];

/// The command line: the derived parser plus the generated setting flags.
pub fn command() -> Command {
    let mut command = <crate::Cli as clap::CommandFactory>::command();
    for name in TAKE_SETTINGS {
        command = command.mut_subcommand(name, |c| add_options(add_identity(c), false));
    }
    for name in TAKE_READING {
        command = command.mut_subcommand(name, |c| add_options(add_identity(c), true));
    }
    for name in TAKE_IDENTITY {
        command = command.mut_subcommand(name, add_identity);
    }
    command
}

/// `--NAME` for each identity field (a number), with the schemes that take it in the help.
fn add_identity(command: Command) -> Command {
    registry::identity_fields()
        .into_iter()
        .fold(command, |command, (field, schemes)| {
            let arg = Arg::new(field.name)
                .value_name("N")
                .value_parser(clap::value_parser!(u64));
            command.arg(setting(arg, field.name, field.help, &schemes))
        })
}

/// `--NAME` for each option (text), with the schemes that take it in the help; only the
/// options that change how ids are read when `reading`.
fn add_options(command: Command, reading: bool) -> Command {
    registry::options()
        .into_iter()
        .filter(|(option, _)| option.reads || !reading)
        .fold(command, |command, (option, schemes)| {
            let arg = Arg::new(option.name).value_name(option.value);
            command.arg(setting(arg, option.name, option.help, &schemes))
        })
}

/// `arg` as the flag `--name` under "Scheme settings", its help naming the schemes that take
/// it.
fn setting(arg: Arg, name: &'static str, help: &str, schemes: &[&str]) -> Arg {
    arg.long(name)
        .help_heading("Scheme settings")
        .help(format!("{help} ({})", schemes.join(", ")))
}

/// The settings given on the command line, to the subcommand that takes them.
pub fn given(matches: &ArgMatches) -> Options {
    let mut options = Options::default();
    let Some((name, sub)) = matches.subcommand().filter(|(name, _)| {
        TAKE_SETTINGS.contains(name) || TAKE_READING.contains(name) || TAKE_IDENTITY.contains(name)
    }) else {
        return options;
    };
    for (field, _) in registry::identity_fields() {
        if let Some(value) = sub.get_one::<u64>(field.name) {
            options.set_field(field.name, *value);
        }
    }
    if TAKE_IDENTITY.contains(&name) {
        return options;
    }
    let reading = TAKE_READING.contains(&name);
    for (option, _) in registry::options()
        .into_iter()
        .filter(|(option, _)| option.reads || !reading)
    {
        if let Some(value) = sub.get_one::<String>(option.name) {
            options.set_option(option.name, value.clone());
        }
    }
    options
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_generated_flags_clash_with_nothing() {
        // clap's own consistency checks: duplicate names or flags fail here.
        super::command().debug_assert();
    }
}
