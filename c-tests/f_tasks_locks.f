C     f_tasks_locks.f -- fixed-form Fortran: tasks created in a single block and awaited with
C     taskwait (each task sets and unsets a lock), omp_test_lock in a loop, a nest lock set
C     twice per thread, a parallel do, and a user region (upper-case sentinels).
      PROGRAM FTL
      IMPLICIT NONE
      INTEGER TOTAL, K, PSUM
C$POMP INST INIT
C$POMP INST BEGIN(FTLMAIN)
      CALL FTASKS(5, TOTAL, K, PSUM)
C$POMP INST END(FTLMAIN)
      PRINT '(A,I0,A,I0,A,I0)', 'total=', TOTAL, ' k=', K,
     &      ' psum=', PSUM
      IF (TOTAL .NE. 15) STOP 1
      END

      SUBROUTINE FTASKS(NTASK, TOTAL, K, PSUM)
      USE OMP_LIB
      IMPLICIT NONE
      INTEGER NTASK, TOTAL, K, PSUM, I
      INTEGER(KIND=OMP_LOCK_KIND) LCK
      INTEGER(KIND=OMP_NEST_LOCK_KIND) NLCK
      TOTAL = 0
      K = 0
      PSUM = 0
      CALL OMP_INIT_LOCK(LCK)
      CALL OMP_INIT_NEST_LOCK(NLCK)
C$OMP PARALLEL SHARED(TOTAL, K) PRIVATE(I)
C$OMP SINGLE
      DO I = 1, NTASK
C$OMP TASK FIRSTPRIVATE(I) SHARED(TOTAL)
      CALL OMP_SET_LOCK(LCK)
      TOTAL = TOTAL + I
      CALL OMP_UNSET_LOCK(LCK)
C$OMP END TASK
      END DO
C$OMP TASKWAIT
C$OMP END SINGLE
      DO WHILE (.NOT. OMP_TEST_LOCK(LCK))
      END DO
      K = K + 1
      CALL OMP_UNSET_LOCK(LCK)
      CALL OMP_SET_NEST_LOCK(NLCK)
      CALL OMP_SET_NEST_LOCK(NLCK)
      K = K + 1
      CALL OMP_UNSET_NEST_LOCK(NLCK)
      CALL OMP_UNSET_NEST_LOCK(NLCK)
C$OMP END PARALLEL
C$OMP PARALLEL DO REDUCTION(+:PSUM) SCHEDULE(STATIC)
      DO I = 1, 100
         PSUM = PSUM + I
      END DO
C$OMP END PARALLEL DO
      CALL OMP_DESTROY_LOCK(LCK)
      CALL OMP_DESTROY_NEST_LOCK(NLCK)
      END
