module grid
  implicit none
  integer, parameter :: n = 200
  double precision :: u(n)
contains
  subroutine init_grid()
    integer :: i
!$omp parallel do
    do i = 1, n
      u(i) = dble(mod(i, 7))
    end do
!$omp end parallel do
  end subroutine init_grid
end module grid
