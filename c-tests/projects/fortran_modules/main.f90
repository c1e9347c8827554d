program heat_modules
  use grid
  use solver
  implicit none
  double precision :: total
  integer :: step, seen
  call init_grid()
  seen = 0
!$pomp inst begin(sweeps)
  do step = 1, 3
    call sweep(total)
  end do
!$pomp inst end(sweeps)
!$omp parallel
!$omp critical
  seen = seen + 1
!$omp end critical
!$omp end parallel
  print '(a, f10.3, a, i0)', 'heat_modules: total ', total, ', threads ', seen
end program heat_modules
