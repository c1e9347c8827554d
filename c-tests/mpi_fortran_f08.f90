! The exchange of mpi_fortran.f90 through the mpi_f08 module (handles of derived types, ierror
! left out of some calls): MPI_Init, MPI_Irecv/MPI_Isend/MPI_Waitall with a ring neighbour,
! MPI_Sendrecv with a status, MPI_Allreduce, MPI_Finalize. Rank 0 prints
! "mpi_fortran_f08 ranks R total T" (T = 2 * (0 + 1 + ... + R-1)) and "status ok".
program mpi_fortran_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, nranks, left, right, got, failures, all_failures
  integer :: from_left, from_right, total
  type(MPI_Request) :: requests(4)
  type(MPI_Status) :: status

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  failures = 0
  call MPI_Irecv(from_left, 1, MPI_INTEGER, left, 1, MPI_COMM_WORLD, requests(1))
  call MPI_Irecv(from_right, 1, MPI_INTEGER, right, 2, MPI_COMM_WORLD, requests(2), ierr)
  call MPI_Isend(rank, 1, MPI_INTEGER, right, 1, MPI_COMM_WORLD, requests(3))
  call MPI_Isend(rank, 1, MPI_INTEGER, left, 2, MPI_COMM_WORLD, requests(4), ierr)
  call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE)
  if (from_left /= left .or. from_right /= right) failures = failures + 1
  got = -1
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 3, got, 1, MPI_INTEGER, left, 3, &
                    MPI_COMM_WORLD, status, ierr)
  if (got /= left .or. status%MPI_SOURCE /= left .or. status%MPI_TAG /= 3) then
     failures = failures + 1
  end if
  call MPI_Allreduce(from_left + from_right, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Reduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD)
  if (rank == 0) then
     print '(a,i0,a,i0)', 'mpi_fortran_f08 ranks ', nranks, ' total ', total
     if (all_failures == 0) print '(a)', 'status ok'
  end if
  call MPI_Finalize(ierr)
end program mpi_fortran_f08
