module solver
  use grid
  implicit none
contains
  subroutine sweep(total)
    double precision, intent(out) :: total
    double precision :: v(n)
    integer :: i
    total = 0
!$omp parallel
!$omp do
    do i = 2, n - 1
      v(i) = (u(i - 1) + u(i) + u(i + 1)) / 3
    end do
!$omp end do
!$omp do reduction(+:total)
    do i = 2, n - 1
      u(i) = v(i)
      total = total + v(i)
    end do
!$omp end do
!$omp end parallel
  end subroutine sweep
end module solver
