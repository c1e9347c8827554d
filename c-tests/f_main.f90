! f_main.f90 -- uninstrumented main program for f_constructs.f90 (linked with it, or with a
! shared library built from it).
program f_main
  use omp_lib
  implicit none
  integer :: total, r1, r3
  call f_constructs(total)
  call f_user(1, r1)
  call f_user(3, r3)
  print '(a,i0,a,i0,a,i0)', 'total=', total, ' r1=', r1, ' r3=', r3
  if (total < 0 .or. r1 /= 0 .or. r3 /= 1) stop 1
end program f_main
