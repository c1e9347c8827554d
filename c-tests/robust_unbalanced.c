/* robust_unbalanced.c -- calls POMP2_* directly (no opari2): ends a user region that was never
 * begun (inside one that was), twice. pomptrace must name that region in its one warning. */
#include <opari2/pomp2_user_lib.h>
#include <stdio.h>

int main(void)
{
    POMP2_USER_Region_handle outer = NULL, stray = NULL;
    POMP2_USER_Assign_handle(&stray, "90*regionType=userRegion*sscl=robust_unbalanced.c:30:30"
                                     "*escl=robust_unbalanced.c:31:31*userRegionName=stray**");
    for (int i = 0; i < 2; i++) {
        POMP2_Begin(&outer, "90*regionType=userRegion*sscl=robust_unbalanced.c:20:20"
                            "*escl=robust_unbalanced.c:22:22*userRegionName=outer**");
        POMP2_End(&stray);
        POMP2_End(&outer);
    }
    printf("done\n");
    return 0;
}
