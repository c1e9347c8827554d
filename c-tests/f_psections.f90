! f_psections.f90 -- a Fortran parallel sections construct, for which OPARI2 calls
! POMP2_Sections_enter without its CTC string argument (semantics doc 2.4).
program f_psections
  implicit none
  integer :: s1, s2, s3
  s1 = 0
  s2 = 0
  s3 = 0
!$omp parallel sections
!$omp section
  s1 = 1
!$omp section
  s2 = 2
!$omp section
  s3 = 3
!$omp end parallel sections
  print '(a,i0)', 'sum=', s1 + s2 + s3
  if (s1 + s2 + s3 /= 6) stop 1
end program f_psections
