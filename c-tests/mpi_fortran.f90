! A hybrid MPI + OpenMP Fortran program (use mpi) for tests/mpi_build.rs: each rank exchanges
! halos with both ring neighbours by MPI_Irecv/MPI_Isend/MPI_Waitall, sums what it got in an
! OpenMP loop and over the ranks by MPI_Allreduce, for an iteration count broadcast by rank 0;
! then one MPI_Sendrecv with a status, a barrier and MPI_Finalize. Rank 0 prints
! "mpi_fortran ranks R total T" (T = 16 * (0 + 1 + ... + R-1)) and "status ok" when every
! status and value was right.
program mpi_fortran
  use mpi
  implicit none
  integer, parameter :: width = 8
  integer :: ierr, provided, rank, nranks, left, right, i, it, iterations, got, failures
  integer :: all_failures
  integer :: requests(4), status(MPI_STATUS_SIZE)
  double precision :: halo_out(width), from_left(width), from_right(width), local, total

  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  failures = 0
  iterations = 0
  if (rank == 0) iterations = 5
  call MPI_Bcast(iterations, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)

  do it = 1, iterations
     halo_out = rank
     call MPI_Irecv(from_left, width, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, &
                    requests(1), ierr)
     call MPI_Irecv(from_right, width, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, &
                    requests(2), ierr)
     call MPI_Isend(halo_out, width, MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, &
                    requests(3), ierr)
     call MPI_Isend(halo_out, width, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, &
                    requests(4), ierr)
     call MPI_Waitall(4, requests, MPI_STATUSES_IGNORE, ierr)
     local = 0
!$omp parallel do reduction(+:local)
     do i = 1, width
        local = local + from_left(i) + from_right(i)
     end do
!$omp end parallel do
     call MPI_Allreduce(local, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do

  got = -1
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 3, got, 1, MPI_INTEGER, left, 3, &
                    MPI_COMM_WORLD, status, ierr)
  if (got /= left .or. status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 3) then
     failures = failures + 1
  end if
  call MPI_Reduce(failures, all_failures, 1, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
     print '(a,i0,a,f0.1)', 'mpi_fortran ranks ', nranks, ' total ', total
     if (all_failures == 0) print '(a)', 'status ok'
  end if
  call MPI_Finalize(ierr)
end program mpi_fortran
