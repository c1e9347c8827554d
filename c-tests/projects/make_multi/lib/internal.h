/* Found next to the source that includes it (no -I for this directory). */
#define SCALE 0.5
