! f_preproc.F90 -- Fortran through the C preprocessor: macros in loop bounds and clauses, code
! selected with #if (one parallel region is compiled only when FPP_EXTRA is defined; the test
! does not define it), and a user region around all of it. OPARI2 lower-cases directives, so a
! macro used in a directive must have a lower-case name.
#define NITER 12
#define chunk 3
program f_preproc
  use omp_lib
  implicit none
  integer :: i, hits, evens
  hits = 0
  evens = 0
!$pomp inst begin(fpp)
!$omp parallel do schedule(dynamic, chunk) reduction(+:hits)
  do i = 1, NITER
    hits = hits + 1
  end do
!$omp end parallel do
#ifdef FPP_EXTRA
!$omp parallel
  hits = hits + 1000
!$omp end parallel
#endif
#if NITER > 10
!$omp parallel
!$omp do reduction(+:evens)
  do i = 1, NITER
    if (mod(i, 2) == 0) evens = evens + 1
  end do
!$omp end do
!$omp end parallel
#endif
!$pomp inst end(fpp)
  print '(a,i0,a,i0)', 'hits=', hits, ' evens=', evens
  if (hits /= NITER .or. evens /= NITER / 2) stop 1
end program f_preproc
