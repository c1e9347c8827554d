/* link_main.c -- an uninstrumented main program (linked without pomptrace) that runs the instrumented link_program.c from a shared library. */
int link_program_run(void);

int main(void)
{
    return link_program_run();
}
