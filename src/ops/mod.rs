//! What each POMP2 and MPI call records, in terms of constructs, tasks and the calling thread's
//! location. The FFI layer converts arguments and calls these; they know nothing of C types.

pub(crate) mod constructs;
pub(crate) mod mpi;
