/* hogsample INTERVAL_MS DURATION_MS PID...: every INTERVAL_MS print "t_ms pid:cpu:state:run_ms ..." */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static long long now_ms(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000LL+t.tv_nsec/1000000;}
int main(int argc,char**argv){
  int iv=atoi(argv[1]),dur=atoi(argv[2]),n=argc-3; long long t0=now_ms();
  char path[64],buf[1024];
  while(now_ms()-t0<dur){
    printf("%lld",now_ms()-t0);
    for(int i=0;i<n;i++){
      int pid=atoi(argv[3+i]),cpu=-1; char st='?'; unsigned long long rt=0;
      snprintf(path,sizeof path,"/proc/%d/stat",pid); FILE*f=fopen(path,"r");
      if(f){ if(fgets(buf,sizeof buf,f)){ char*p=strrchr(buf,')'); if(p){ p+=2; st=*p; int fld=3; char*s=p; while(*s&&fld<39){ if(*s==' ')fld++; s++; } cpu=atoi(s);} } fclose(f);}
      snprintf(path,sizeof path,"/proc/%d/schedstat",pid); f=fopen(path,"r");
      if(f){ if(fscanf(f,"%llu",&rt)!=1) rt=0; fclose(f);}
      printf(" %d:%d:%c:%llu",pid,cpu,st,rt/1000000);
    }
    printf("\n"); fflush(stdout);
    usleep(iv*1000);
  }
  return 0;
}
