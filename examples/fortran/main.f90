! main.f90 -- the uninstrumented driver of the Fortran example.
program main
  implicit none
  double precision :: total
  call heat_run(200, 50, total)
  print '(a,f0.3)', 'heat: total ', total
  if (total < 999.0d0 .or. total > 1001.0d0) stop 1
end program main
