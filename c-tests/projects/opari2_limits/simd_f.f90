program simd_f
  implicit none
  integer, parameter :: n = 1000
  integer :: i
  real(8) :: a(n), s
  s = 0
  do i = 1, n
    a(i) = mod(i, 10)
  end do
!$omp parallel do simd reduction(+:s) schedule(static) &
!$omp& default(none) shared(a)
  do i = 1, n
    s = s + a(i)
  end do
!$omp parallel shared(a)
!$omp do simd
  do i = 1, n
    a(i) = 2 * a(i)
  end do
!$omp end parallel
  print '(a, f8.1, f8.1)', 'simd_f', s, sum(a)
end program simd_f
