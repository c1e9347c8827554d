//! `pomptrace init-regions`: the command line around the init-file generator of
//! `init_regions.rs` (which the syncbench example uses on its own).

use std::path::PathBuf;

use crate::init_regions::{nm_listing, nm_program, InitRegions};
use crate::{print_stdout, Failure};

/// Write OPARI2's link-time init file for the regions of objects and libraries.
///
/// Runs nm on the given objects, static archives and shared libraries and writes the C file
/// that OPARI2's link step generates (POMP2_Init_regions, POMP2_Get_num_regions,
/// POMP2_USER_Init_regions, POMP2_USER_Get_num_regions, POMP2_Get_opari2_version).
#[derive(clap::Args)]
#[command(override_usage = "pomptrace init-regions [-o FILE] OBJ_OR_LIB...")]
pub struct InitRegionsArgs {
    /// Write the C file to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Objects, static archives and shared libraries (nm -D is tried for stripped ones).
    #[arg(required = true, value_name = "OBJ_OR_LIB")]
    inputs: Vec<PathBuf>,
}

pub fn run(args: &InitRegionsArgs) -> Result<(), Failure> {
    let text = init_file_for(&args.inputs)?;
    match &args.output {
        Some(file) => std::fs::write(file, text)
            .map_err(|e| Failure::Error(format!("cannot write {}: {e}", file.display()))),
        None => print_stdout(&text),
    }
}

/// The init file for the regions found by nm in `inputs`.
pub fn init_file_for(inputs: &[PathBuf]) -> Result<String, Failure> {
    let nm = nm_program();
    let mut regions = InitRegions::default();
    for input in inputs {
        regions.add_nm_output(&nm_listing(&nm, input).map_err(Failure::Error)?);
    }
    Ok(regions.to_c())
}
