! f_constructs.f90 -- free-form Fortran: every OpenMP construct OPARI2 instruments in one parallel
! region (do, do nowait, sections, single, master, barrier, critical, named critical, atomic,
! flush, workshare), a parallel do with an ordered block, and user regions with altend. Called
! by the uninstrumented f_main.f90, so it can also live in a shared library.
subroutine f_constructs(total)
  use omp_lib
  implicit none
  integer, intent(out) :: total
  integer, parameter :: n = 64
  integer :: i, s, s2, c1, c2, at, once, ord, masters
  integer :: a(n), b(n)
  s = 0; s2 = 0
  c1 = 0
  c2 = 0
  at = 0
  once = 0
  ord = 0
  masters = 0
!$pomp inst init
!$pomp inst begin(fwork)
!$omp parallel private(i) shared(a, b, s, s2, c1, c2, at, once, masters)
!$omp do schedule(static)
  do i = 1, n
    a(i) = i
  end do
!$omp end do
!$omp do
  do i = 1, n
    b(i) = 2 * a(i)
  end do
!$omp end do nowait
!$omp sections
!$omp section
  s = 1
!$omp section
  s2 = 2
!$omp end sections
!$omp single
  once = once + 1
!$omp end single
!$omp master
  masters = masters + 1
!$omp end master
!$omp barrier
!$omp critical
  c1 = c1 + 1
!$omp end critical
!$omp critical (fcrit)
  c2 = c2 + 1
!$omp end critical (fcrit)
!$omp atomic
  at = at + 1
!$omp flush
!$omp workshare
  a = a + b
!$omp end workshare
!$omp end parallel
!$omp parallel do ordered schedule(static, 1) shared(ord)
  do i = 1, 8
!$omp ordered
    ord = ord * 2 + mod(i, 2)
!$omp end ordered
  end do
!$omp end parallel do
!$pomp inst end(fwork)
  total = sum(a) + s + s2 + once + masters + ord + c1 + c2 + at
  if (s + s2 /= 3 .or. once /= 1 .or. masters /= 1 .or. ord /= 170) total = -1
  if (c1 /= c2 .or. c1 /= at) total = -2
end subroutine f_constructs

! A user region left early through altend on one path.
subroutine f_user(n, r)
  implicit none
  integer, intent(in) :: n
  integer, intent(out) :: r
!$pomp inst begin(fuser)
  if (n > 2) then
    r = 1
!$pomp inst altend(fuser)
    return
  end if
  r = 0
!$pomp inst end(fuser)
end subroutine f_user
