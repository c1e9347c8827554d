! heat.f90 -- the OpenMP part of the Fortran example: explicit 1-D heat diffusion. This file is
! instrumented with opari2; main.f90 is not.
subroutine heat_run(n, steps, total)
  implicit none
  integer, intent(in) :: n, steps
  double precision, intent(out) :: total
  double precision, allocatable :: u(:), v(:)
  integer :: i, s, updates
  allocate(u(n), v(n))
  u = 0.0d0
  v = 0.0d0
  u(n / 2) = 1000.0d0
  updates = 0
  total = 0.0d0
!$pomp inst begin(diffusion)
!$omp parallel private(i, s) shared(u, v, updates, total)
  do s = 1, steps
!$omp do schedule(static)
    do i = 2, n - 1
      v(i) = u(i) + 0.25d0 * (u(i - 1) - 2.0d0 * u(i) + u(i + 1))
    end do
!$omp end do
!$omp workshare
    u(2:n-1) = v(2:n-1)
!$omp end workshare
!$omp critical (bookkeeping)
    updates = updates + 1
!$omp end critical (bookkeeping)
  end do
!$omp do reduction(+:total)
  do i = 1, n
    total = total + u(i)
  end do
!$omp end do
!$omp end parallel
!$pomp inst end(diffusion)
  if (updates == 0) total = -1.0d0
  deallocate(u, v)
end subroutine heat_run
