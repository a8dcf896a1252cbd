#include "testlib.h"
int main(void){const struct CMUnitTest t[]={0};(void)t;return 0;}
